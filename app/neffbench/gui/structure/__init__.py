"""The Structure tab: a job's model as a tree with each layer's error and device time, and its data flow drawn."""
