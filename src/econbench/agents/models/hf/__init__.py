"""Local causal language models (transformers, torch): the ``hf/PATH`` provider and model
preparation (``econbench models``). Needs the ``train`` extra:
``pip install 'econbench[train]'``. AlloBench's post-training lives in
``econbench.runs.allo.posttrain`` and uses this provider; nothing here knows about either
benchmark."""
