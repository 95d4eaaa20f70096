"""Local causal language models (transformers, torch): the ``hf/PATH`` provider, model
preparation, and AlloBench post-training. Needs the ``train`` extra:
``pip install 'econbench[train]'``."""
