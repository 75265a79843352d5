"""The DOT project-text backends: search, read and list inside authorized workspaces."""
