"""The lynxc runtime: what generated servers import (MCP host, validation, caps, backends).

It never imports the compiler. Heavy backend dependencies load on the first call that needs them.
"""
