"""The MCP host: serves a generated server on the `mcp` SDK's low-level `Server`.

The 2.x low-level server does not validate tool arguments, so the host does: every call is
checked against the generated input model as strictly as the inputSchema reads (a bad argument
is answered with `isError: true` naming the field and the rule), the backend runs with its caps
and settings, and its result is converted to JSON values (`wire_values`), checked against the
output schema and sent. Whatever goes wrong in a call is answered as a tool error, never as a
JSON-RPC error or a dropped request. Backends and their models are imported on a tool's first
call, and slow start-up checks run in the background from the first request (startup_checks), so
`initialize` and `tools/list` stay fast.
"""

from __future__ import annotations

import contextvars
import json
import logging
import time
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

from .arguments import ArgumentsError, validate_arguments
from .audit import AuditEvent, AuditLog, Outcome
from .auth.caller import Caller
from .backend import BackendFn, BackendInfo, load_backend
from .caller_arguments import BindingRefused, bind_claims, local_caller, tool_access
from .client_logging import SessionLevels, quiet_logging_deprecation
from .completions import CompletionHost
from .context import ToolContext
from .defaults import DEFAULT_PAGE_SIZE
from .definition import PROMPT_MESSAGES_FILE, ServerDefinition, ToolBinding
from .errors import (
    ToolError,
    crashed_prefix,
    forbidden_prefix,
    invalid_arguments_prefix,
    invalid_result_prefix,
    unsendable_result_prefix,
)
from .output_validation import OutputValidator
from .pages import page
from .prompts import PromptHost, no_resources
from .redact import redact
from .resources import Contents, load_reader
from .startup_checks import DeferredChecks, backend_checks, backend_package
from .wire_values import NotJSONError, encode_json, to_wire

logger = logging.getLogger("lynxc.runtime")
# The request a prompt is rendered for, so that the resources it embeds are read as its caller.
_REQUEST: contextvars.ContextVar[Any] = contextvars.ContextVar("lynxc_prompt_request")

# A cap under this name is also enforced by the host, on the JSON of the structured result.
OUTPUT_JSON_CAP = "max_output_json_bytes"


@dataclass(frozen=True)
class LoadedTool:
    input_model: type[BaseModel]
    backend: BackendFn
    info: BackendInfo
    output_validator: OutputValidator | None


class ToolHost:
    def __init__(
        self,
        definition: ServerDefinition,
        settings: Mapping[str, Any],
        *,
        page_size: int = DEFAULT_PAGE_SIZE,
        audit: AuditLog | None = None,
    ):
        self.definition = definition
        self.audit = audit
        self.settings = dict(settings)
        self.page_size = page_size
        payload = definition.tools_payload()
        self._meta = payload.get("_meta")
        self._wire_tools = payload["tools"]
        self._tools = [types.Tool.model_validate(tool) for tool in self._wire_tools]
        self._schemas = {tool["name"]: tool for tool in self._wire_tools}
        self._bindings = {binding.name: binding for binding in definition.tools}
        self._access = {tool["name"]: tool_access(tool) for tool in self._wire_tools}
        self._local_caller = local_caller(self.settings)
        self._loaded: dict[str, LoadedTool] = {}
        self._deferred = DeferredChecks(backend_checks(definition, "check_settings_deferred"), self.settings)
        self.log_levels = SessionLevels()  # what each handshake session asked of the client log
        # MCP resources (runtime/resources.py, runtime/subscriptions.py): None when none are declared.
        self.resources = load_reader(definition, self.settings, page_size)
        self.subscriptions = None
        if self.resources is not None:
            from .subscriptions import Subscriptions

            self.subscriptions = Subscriptions(self.resources, self.settings)
        # Prompts and completions (issue 31), when the server declares them; a prompt's
        # `resource:` message reads through `read_resource` (the resources host sets it).
        self.read_resource = no_resources if self.resources is None else self._read_for_prompt
        self.prompts = (
            PromptHost.from_files(
                definition.read_checked(definition.prompts),
                definition.read_checked(PROMPT_MESSAGES_FILE),
                lambda uri: self.read_resource(uri),
                page_size=page_size,
            )
            if definition.prompts
            else None
        )
        self.completions = (
            CompletionHost(
                json.loads(definition.read_checked(definition.completions)),
                self.prompts.arguments() if self.prompts is not None else {},
                definition,
                self.settings,
            )
            if definition.completions
            else None
        )

    def tool_scopes(self) -> dict[str, frozenset[str]]:
        """The scopes each tool needs of a caller over an authenticated transport."""
        return {name: access.scopes for name, access in self._access.items()}

    def server(self) -> Server[Any]:
        d = self.definition
        with quiet_logging_deprecation():  # every server can log: handshake clients set a level
            return _StrictServer(
                d.name,
                version=d.version,
                title=d.title,
                instructions=d.instructions,
                on_list_tools=self.list_tools,
                on_call_tool=self.call_tool,
                on_set_logging_level=self.log_levels.set_level,
                get_tool_input_schema=lambda name: self._schemas.get(name, {}).get("inputSchema"),
                **self._surface_handlers(),
                **self._resource_handlers(),
            )

    def _surface_handlers(self) -> dict[str, Any]:
        """The prompts and completion handlers, only for a server that has them: capabilities
        follow the handlers."""
        handlers: dict[str, Any] = {}
        if self.prompts is not None:
            handlers["on_list_prompts"] = self.prompts.list_prompts
            prompts = self.prompts

            async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> Any:
                token = _REQUEST.set(ctx)  # whose request a `resource:` message is read for
                try:
                    return await prompts.get_prompt(ctx, params)
                finally:
                    _REQUEST.reset(token)

            handlers["on_get_prompt"] = get_prompt
        if self.completions is not None:
            completions = self.completions
            handlers["on_completion"] = lambda ctx, params: completions.complete(
                ctx, params, self._caller(ctx), self.log_levels.client_log(ctx, logger_name="completion")
            )
        return handlers

    def _resource_handlers(self) -> dict[str, Any]:
        if self.resources is None or self.subscriptions is None:
            return {}
        reader, subscriptions = self.resources, self.subscriptions
        return {
            "on_list_resources": lambda ctx, params: reader.list_resources(params),
            "on_list_resource_templates": lambda ctx, params: reader.list_templates(params),
            "on_read_resource": self.read_resource_request,
            "on_subscribe_resource": subscriptions.subscribe,
            "on_unsubscribe_resource": subscriptions.unsubscribe,
            "on_subscriptions_listen": subscriptions.listen,
        }

    # resources/read -------------------------------------------------------------------------

    async def read_resource_request(
        self, ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        return types.ReadResourceResult(contents=await self.read_uri(str(params.uri), ctx))

    async def read_uri(self, uri: str, ctx: Any) -> list[Contents]:
        """The contents of `uri` as the caller of request `ctx` may see them (prompts embed
        resources through this); ResourceNotFound when the server has no such resource."""
        from .resources import ResourceNotFound

        if self.resources is None:
            raise ResourceNotFound(uri)
        context = ToolContext(
            tool="resources/read",
            caps={},
            settings=self.settings,
            server=self.definition,
            caller=self._caller(ctx),
        )
        return await self.resources.read(uri, context)

    async def _read_for_prompt(self, uri: str) -> list[Contents]:
        """A prompt's `resource:` message, read as the caller of the prompts/get it renders for
        (a bound collection's record is the caller's own, or not found)."""
        return await self.read_uri(uri, _REQUEST.get(None))

    # tools/list ---------------------------------------------------------------------------

    async def list_tools(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        self._deferred.start()  # a client lists tools before it calls one: start checking now
        tools, next_cursor = page("tools", self._tools, params.cursor if params else None, self.page_size)
        return types.ListToolsResult(tools=tools, next_cursor=next_cursor, _meta=self._meta)

    # tools/call ---------------------------------------------------------------------------

    async def call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        started = time.perf_counter()
        caller = self._caller(ctx)
        outcome: Outcome = "unknown_tool"
        result: types.CallToolResult | None = None
        try:
            result, outcome = await self._call(ctx, params, caller)
            return result
        finally:
            if self.audit is not None:
                size = len(result.content[0].text.encode()) if result is not None and outcome == "ok" else 0
                duration = (time.perf_counter() - started) * 1000
                self.audit.record(AuditEvent(params.name, outcome, duration, size, caller))

    def _caller(self, ctx: Any) -> Caller | None:
        """The verified caller of an HTTP request (runtime/http_auth.py put it there), or on
        stdio the local operator, as the caller_claims setting describes them."""
        request = getattr(ctx, "request", None)
        if request is None:
            return self._local_caller
        user = request.scope.get("user")
        return getattr(user, "caller", None)

    def _access_problem(self, ctx: Any, name: str, caller: Caller | None) -> str | None:
        """Why an HTTP caller may not call `name` (the authentication middleware refused such
        requests already with 401 and 403: this holds even where it was not in front)."""
        if self.definition.auth is None or getattr(ctx, "request", None) is None:
            return None
        if caller is None:
            return "this server authenticates its callers, and the request carries no verified identity"
        missing = caller.missing_scopes(self._access[name].scopes)
        if missing:
            plural = "s" if len(missing) > 1 else ""
            return f"the caller lacks the scope{plural} {' '.join(missing)} (insufficient_scope)"
        return None

    async def _call(
        self, ctx: Any, params: types.CallToolRequestParams, caller: Caller | None
    ) -> tuple[types.CallToolResult, Outcome]:
        binding = self._bindings.get(params.name)
        if binding is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name!r}")
        refusal = self._access_problem(ctx, binding.name, caller)
        if refusal is not None:
            return _error(f"{forbidden_prefix(binding.name)}{refusal}"), "forbidden"
        problems = await self._deferred.problems(backend_package(binding.backend))
        if problems:
            return _error(
                f"tool {binding.name!r} cannot run with this server's settings (fix them and restart "
                f"the server): {'; '.join(problems)}"
            ), "error"
        try:
            tool = self._load(binding)
        except Exception as err:
            logger.error("loading tool %s failed:\n%s", binding.name, traceback.format_exc())
            return _error(f"tool {binding.name!r} is unavailable: {type(err).__name__}: {err}"), "error"
        try:
            sent = bind_claims(params.arguments or {}, self._access[binding.name].claims, caller)
        except BindingRefused as err:
            return _error(f"{invalid_arguments_prefix(binding.name)}{err}"), "refused"
        try:
            arguments = validate_arguments(tool.input_model, sent, self._schemas[binding.name]["inputSchema"])
        except ArgumentsError as err:
            return _error(f"{invalid_arguments_prefix(binding.name)}{err}"), "invalid_arguments"

        meta = params.meta or {}
        context = ToolContext(
            tool=binding.name,
            caps=binding.caps,
            settings=self.settings,
            report_progress=_progress_reporter(ctx),
            progress_requested=meta.get("progress_token", meta.get("progressToken")) is not None,
            server=self.definition,
            caller=caller,
            client_log=self.log_levels.client_log(ctx, logger_name=binding.name),
        )
        try:
            result = await tool.backend(arguments, context)
        except ToolError as err:
            return _error(str(err)), "error"
        except Exception as err:
            logger.error("tool %s failed:\n%s", binding.name, traceback.format_exc())
            return _error(f"{crashed_prefix(binding.name)}{type(err).__name__}: {err}"), "error"

        try:
            structured = to_wire(result)
            encoded = encode_json(structured)
        except NotJSONError as err:
            return _error(f"{unsendable_result_prefix(binding.name)}{err.where}: {err.reason}"), "error"
        except Exception as err:  # e.g. RecursionError: still an answer, never a dead request
            logger.error("tool %s result could not be converted:\n%s", binding.name, traceback.format_exc())
            return _error(
                f"{binding.name!r} result could not be sent as JSON: {type(err).__name__}: {err}"
            ), "error"
        if tool.output_validator is not None:
            problem = tool.output_validator.problem(structured)
            if problem is not None:
                logger.error("tool %s returned a result outside its output schema: %s", binding.name, problem)
                return _error(f"{invalid_result_prefix(binding.name)}{problem}"), "error"
        limit = binding.caps.get(OUTPUT_JSON_CAP)
        if limit is not None and len(encoded) > limit:
            return _error(
                f"{binding.name!r} result is {len(encoded)} bytes of JSON, over its cap of {limit}"
            ), "error"
        if tool.info.render_text is None:
            text = encoded.decode()  # exactly the JSON that was validated and measured
        else:
            try:
                text = _sendable(tool.info.render_text(result))
            except Exception as err:
                logger.error("tool %s text rendering failed:\n%s", binding.name, traceback.format_exc())
                return _error(
                    f"{binding.name!r} failed to render its text: {type(err).__name__}: {err}"
                ), "error"
        return types.CallToolResult(
            content=[types.TextContent(text=text)],
            structured_content=structured if isinstance(structured, dict) else None,
        ), "ok"

    def _load(self, binding: ToolBinding) -> LoadedTool:
        if binding.name not in self._loaded:
            models = self.definition.load_models(binding)
            fn, info = load_backend(binding.backend)
            output_schema = self._schemas[binding.name].get("outputSchema")
            validator = OutputValidator(output_schema) if output_schema else None
            self._loaded[binding.name] = LoadedTool(getattr(models, binding.input_model), fn, info, validator)
        return self._loaded[binding.name]


class _StrictServer(Server[Any]):
    """The SDK server, with its Streamable HTTP app answering malformed JSON bodies alike in both
    protocol eras (see `http_json_bodies`), ending quietly a request whose client went away
    (`http_disconnects`) and bounding the sessions one client holds (`http_sessions`; the
    option `max_sessions_per_client`). Whoever serves HTTP gets that by asking the server for
    its app, as with the SDK's own."""

    def streamable_http_app(self, **options: Any) -> Any:
        from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
        from starlette.middleware import Middleware

        from .defaults import DEFAULT_MAX_SESSIONS_PER_CLIENT
        from .http_disconnects import QuietDisconnects
        from .http_json_bodies import StrictJSONBodies
        from .http_sessions import SessionsPerClient

        per_client = options.pop("max_sessions_per_client", DEFAULT_MAX_SESSIONS_PER_CLIENT)
        caller_auth = options.pop("caller_auth", None)  # an http_auth.HttpAuth, or None: no one is asked
        path = options.get("streamable_http_path", "/mcp")
        app = super().streamable_http_app(**options)
        # Innermost: after any authentication, so that a caller's identity is known.
        app.user_middleware.append(
            Middleware(SessionsPerClient, session_manager=self.session_manager, path=path, limit=per_client)
        )
        if caller_auth is not None:
            caller_auth.install(app, path)  # the per-tool scope check, which reads the checked body
        app.add_middleware(
            StrictJSONBodies,
            path=path,
            max_body_size=options.get("max_request_body_size", DEFAULT_MAX_REQUEST_BODY_SIZE),
        )
        if caller_auth is not None:
            caller_auth.install_outer(app, path)  # who is calling, before any body is read
        app.add_middleware(QuietDisconnects)  # added last: outermost, it sees every failure
        return app


def _error(message: str) -> types.CallToolResult:
    # A backend's message may quote a database URL (a driver's error): never its password.
    return types.CallToolResult(content=[types.TextContent(text=_sendable(redact(message)))], is_error=True)


def _sendable(text: str) -> str:
    """`text` as valid Unicode: a lone surrogate (a file name read with surrogateescape, say)
    would make the whole response unserializable, so it is shown escaped (`\\udcff`)."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode()
    return text


def _progress_reporter(ctx: Any):
    async def report(progress: float, total: float | None = None, message: str | None = None) -> None:
        await ctx.session.report_progress(progress, total, message)

    return report
