"""HTTP tools: one REST operation per tool, described by the build in http.json and served with httpx.

- catalog.py: generated/<server>/http.json as frozen dataclasses;
- request.py: a call's request from its arguments (path segments, query, headers, JSON body);
- credentials.py: bearer, API key, basic and OAuth 2 client credentials from secret settings;
- transport.py: sending over the pool, same-origin redirects only, bodies read with a cap;
- retries.py: which answers are retried, after how long;
- exchange.py: one call's exchange: credentials, retries, the OAuth 2 refresh, the answer;
- results.py: the answer as the structured result, and the messages quoting it;
- redaction.py: the call's secrets masked in any quoted text;
- pool.py: one httpx pool and token cache per served server;
- tools.py: `call_http`, the backend every HTTP tool binds to.

Importing this package loads no httpx.
"""
