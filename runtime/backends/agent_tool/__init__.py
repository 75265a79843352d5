"""The agent-tool backends: grep (ripgrep), glob and read under configured roots."""
