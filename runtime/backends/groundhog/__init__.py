"""groundhog: read the web for an agent (search, read_url, research, status) on httpx and trafilatura."""
