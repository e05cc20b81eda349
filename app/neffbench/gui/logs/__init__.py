"""A job's log files, each shown whole in the window with the compile log's levels, search and error codes."""
