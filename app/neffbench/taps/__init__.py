"""Layer-by-layer numerics: tap a module's intermediate outputs, return them from one traced graph, compare each.

``select`` chooses the taps (submodules in execution order, by depth or path pattern), ``wrapper`` makes the
tapped variant that returns them, ``compare`` measures every tap against the eager and float64 references,
``report`` says it in words and as JSON. Torch only, no jobs, command line or window: those sit above.
"""
