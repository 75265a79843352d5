"""Object-store locations and the writer lease, shared by the stores that may live on one (the
lynx-mcp index, the records store): location.py, lease.py."""
