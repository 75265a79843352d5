"""The conformance server's tools: the fixtures the MCP conformance suite's server scenarios
call (the reference "everything" server's test tools), written as ordinary lynxc backends."""
