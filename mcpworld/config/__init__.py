"""Config models for apps and tasks, and their loaders."""
