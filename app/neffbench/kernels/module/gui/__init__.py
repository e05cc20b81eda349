"""The module kernel's spec form (entry, inputs, kwargs, buckets): Qt widgets, imported only by the window."""
