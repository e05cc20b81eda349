"""The user's own code as the workbench sees it: where a file comes from, and sentences about what it raised."""
