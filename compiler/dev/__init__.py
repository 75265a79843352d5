"""`lynxc dev`: watch a project, rebuild what changed, and keep serving across rebuilds."""
