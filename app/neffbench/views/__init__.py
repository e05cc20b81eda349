"""Frozen, typed views of the records on disk (job.json and what it holds), below ``jobs/`` and ``runs/``.

Every reader goes through these; the fallbacks for records that earlier versions wrote live here alone.
"""
