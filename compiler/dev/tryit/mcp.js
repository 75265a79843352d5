// A small MCP client over Streamable HTTP, from the browser, same origin as the endpoint:
// `initialize` (handshake era), `notifications/initialized`, then requests by POST whose answer is
// either JSON or an SSE stream (notifications such as progress first, then the response), and the
// session's GET stream for what the server says unasked (notifications/tools/list_changed).
// The browser sends its own Origin and Host headers, which the server's DNS-rebinding checks
// accept for a page it served itself.

export const PROTOCOL_VERSION = "2025-06-18";
const CLIENT_INFO = { name: "lynxc-dev-try-it", version: "1" };

export class RpcError extends Error {
  constructor(code, message, data) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

export class HttpError extends Error {
  constructor(status, text) {
    super(`HTTP ${status}${text ? `: ${text.slice(0, 300)}` : ""}`);
    this.status = status;
  }
}

// Reads an SSE body and calls onEvent(data) for each `message` event's data.
async function readSse(body, onEvent, signal) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const flush = (block) => {
    let event = "message";
    const data = [];
    for (const line of block.split(/\r\n|\r|\n/)) {
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "event") event = value;
      else if (field === "data") data.push(value);
    }
    if (data.length && event === "message") onEvent(data.join("\n"));
  };
  try {
    for (;;) {
      if (signal && signal.aborted) return;
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let match;
      while ((match = /\r\n\r\n|\n\n|\r\r/.exec(buffer))) {
        flush(buffer.slice(0, match.index));
        buffer = buffer.slice(match.index + match[0].length);
      }
    }
    if (buffer.trim()) flush(buffer);
  } finally {
    reader.releaseLock();
  }
}

export class McpClient {
  // handlers: onNotification(message), onState(state, detail)
  constructor(endpoint, handlers = {}) {
    this.endpoint = endpoint;
    this.handlers = handlers;
    this.sessionId = null;
    this.protocolVersion = PROTOCOL_VERSION;
    this.serverInfo = null;
    this.capabilities = {};
    this.nextId = 1;
    this.listening = null;
    this.closed = false;
    this.connecting = null;
  }

  state(state, detail = "") {
    if (this.handlers.onState) this.handlers.onState(state, detail);
  }

  headers() {
    const headers = {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
    };
    if (this.sessionId) headers["Mcp-Session-Id"] = this.sessionId;
    if (this.sessionId) headers["Mcp-Protocol-Version"] = this.protocolVersion;
    return headers;
  }

  async connect() {
    if (!this.connecting) {
      this.connecting = this._connect().finally(() => {
        this.connecting = null;
      });
    }
    return this.connecting;
  }

  async _connect() {
    this.state("connecting");
    this.sessionId = null;
    const result = await this._post(
      {
        jsonrpc: "2.0",
        id: this.nextId++,
        method: "initialize",
        params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: CLIENT_INFO },
      },
      null,
      (response) => {
        const id = response.headers.get("mcp-session-id");
        if (id) this.sessionId = id;
      },
    );
    this.protocolVersion = result.protocolVersion || PROTOCOL_VERSION;
    this.serverInfo = result.serverInfo || null;
    this.capabilities = result.capabilities || {};
    await this._post({ jsonrpc: "2.0", method: "notifications/initialized" });
    this.state("connected", this.serverInfo ? this.serverInfo.version || "" : "");
    this._listen();
    return result;
  }

  // A request; onMessage(message) sees every other message that comes on its stream
  // (notifications/progress of this request). A lost session is re-initialized once.
  async request(method, params, onMessage) {
    if (!this.sessionId) await this.connect();
    const message = () => ({ jsonrpc: "2.0", id: this.nextId++, method, params });
    try {
      return await this._post(message(), onMessage);
    } catch (err) {
      if (err instanceof HttpError && err.status === 404 && !this.closed) {
        await this.connect(); // the server forgot the session (it restarted): a new one
        return await this._post(message(), onMessage);
      }
      throw err;
    }
  }

  async _post(message, onMessage, onResponse) {
    const response = await fetch(this.endpoint, {
      method: "POST",
      headers: this.headers(),
      body: JSON.stringify(message),
      cache: "no-store",
      credentials: "same-origin",
    });
    if (onResponse) onResponse(response);
    if (!response.ok) {
      throw new HttpError(response.status, await response.text().catch(() => ""));
    }
    if (message.id === undefined) {
      await response.body?.cancel().catch(() => {});
      return null;
    }
    const type = (response.headers.get("content-type") || "").toLowerCase();
    let answer = null;
    const take = (data) => {
      let parsed;
      try {
        parsed = JSON.parse(data);
      } catch {
        return;
      }
      for (const item of Array.isArray(parsed) ? parsed : [parsed]) {
        if (item && item.id === message.id && ("result" in item || "error" in item)) answer = item;
        else this._dispatch(item, onMessage);
      }
    };
    if (type.startsWith("text/event-stream")) {
      await readSse(response.body, take);
    } else {
      take(await response.text());
    }
    if (!answer) throw new Error(`the server closed the stream of ${message.method} without answering`);
    if (answer.error) throw new RpcError(answer.error.code, answer.error.message, answer.error.data);
    return answer.result;
  }

  _dispatch(message, onMessage) {
    if (!message || typeof message !== "object") return;
    if (message.method && message.id !== undefined) {
      // A request from the server (ping): answer it; this client offers no other capability.
      const reply =
        message.method === "ping"
          ? { jsonrpc: "2.0", id: message.id, result: {} }
          : { jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "Method not found" } };
      this._post(reply).catch(() => {});
      return;
    }
    if (onMessage) onMessage(message);
    if (message.method && this.handlers.onNotification) this.handlers.onNotification(message);
  }

  // The session's GET stream, kept open; reopened (or the session renewed) when it drops.
  async _listen() {
    if (this.listening || this.closed) return;
    const controller = new AbortController();
    this.listening = controller;
    let delay = 500;
    try {
      while (!this.closed && this.listening === controller) {
        try {
          const response = await fetch(this.endpoint, {
            method: "GET",
            headers: {
              Accept: "text/event-stream",
              "Mcp-Session-Id": this.sessionId,
              "Mcp-Protocol-Version": this.protocolVersion,
            },
            cache: "no-store",
            signal: controller.signal,
          });
          if (response.status === 404 || response.status === 400) {
            this.listening = null;
            this.state("reconnecting", "the server forgot this session");
            await this.connect(); // starts a new listener
            if (this.handlers.onReconnect) this.handlers.onReconnect();
            return;
          }
          if (response.status === 405) return; // the server offers no GET stream
          if (!response.ok) throw new HttpError(response.status, "");
          this.state("connected", this.serverInfo ? this.serverInfo.version || "" : "");
          delay = 500;
          await readSse(response.body, (data) => {
            try {
              this._dispatch(JSON.parse(data));
            } catch {
              /* not JSON: ignore */
            }
          });
        } catch (err) {
          if (controller.signal.aborted) return;
          if (!(err instanceof TypeError) && !(err instanceof HttpError)) throw err;
        }
        if (this.closed || this.listening !== controller) return;
        this.state("reconnecting", "the update stream dropped");
        await new Promise((resolve) => setTimeout(resolve, delay));
        delay = Math.min(delay * 2, 5000);
      }
    } catch (err) {
      this.state("disconnected", String(err && err.message ? err.message : err));
      if (this.listening === controller) this.listening = null;
    }
  }

  // Ends the session (the page is going away): `lynxc dev` keeps idle sessions for as long as
  // their client lives, so a reloaded page says goodbye rather than leave one behind.
  close() {
    this.closed = true;
    if (this.listening) this.listening.abort();
    this.listening = null;
    if (!this.sessionId) return;
    fetch(this.endpoint, {
      method: "DELETE",
      headers: { "Mcp-Session-Id": this.sessionId, "Mcp-Protocol-Version": this.protocolVersion },
      keepalive: true,
    }).catch(() => {});
    this.sessionId = null;
  }

  async listTools() {
    const tools = [];
    let cursor;
    const seen = new Set();
    for (let page = 0; page < 1000; page++) {
      const result = await this.request("tools/list", cursor ? { cursor } : {});
      tools.push(...(result.tools || []));
      cursor = result.nextCursor;
      if (!cursor || seen.has(cursor)) break;
      seen.add(cursor);
    }
    return tools;
  }
}
