"""`lynxc test`: run each server's spec examples, and fuzz its tools, through a real MCP client
against the real `lynxc serve` process (issue 29)."""
