"""A job's model as a tree: every submodule in call order, with its shapes, parameters, FLOPs and the traced graph's
operations under it, kept once in ``JOB/structure.json`` and read with the latest compare's error and the latest
profile's device time laid on it.

``capture`` and ``graph`` run where torch lives (the compile worker, or a probe for a job compiled before
structures existed); everything else here is plain Python: ``document`` reads the file, ``flow`` draws the data
flow between a node's children, ``layers`` joins the errors and times, ``diff`` compares two jobs layer by layer.
"""
