"""Widgets and helpers every tab uses: background calls on Python threads, the threaded controller base, plots."""
