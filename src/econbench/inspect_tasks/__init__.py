"""CoffeeBench and AlloBench as Inspect AI tasks (the optional extra ``econbench[inspect]``).

``inspect eval econbench/coffeebench`` and ``inspect eval econbench/allobench`` find the tasks
through the ``inspect_ai`` entry point (:mod:`econbench.inspect_tasks._registry`). The model
under evaluation plays through econbench's own agent — its prompts, tools, compaction, call
record and checkpoints — over a bridge to the Inspect model (:mod:`.bridge`), so every call is
an Inspect ``generate`` in the ``.eval`` log and the run directory beside it is an ordinary
econbench run. docs/inspect.md is the user's guide.

Nothing else in econbench imports this package: ``inspect_ai`` is needed only here.
"""
