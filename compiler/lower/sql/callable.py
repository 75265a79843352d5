"""The DuckDB functions a SQL tool may call: an allow-list, reviewed by hand.

A tool's statement runs on a server whose DuckDB knows the absolute paths of its data, its
temporary and secrets folders and its settings, and whose sandbox still lets it read the
declared files. So a statement may call only functions that compute on the values they are
given: arithmetic, text, dates, lists, structs, maps, JSON values, aggregates and windows, and
the table functions that make rows from values (range, unnest, json_each). Refused, as not on
the list: what reveals the server (current_setting(), version(), the duckdb_*() and pragma_*()
catalogs, pg_*() introspection), what reads files (read_csv(), sniff_csv(), glob(),
parquet_metadata(): the server's files are declared data, read through its views), what
changes state or waits (nextval(), setseed(), write_log(), sleep_ms()), and what runs SQL text
(query(): also SQL_DYNAMIC). A function DuckDB adds in a new version is refused until someone
reviews it and adds it here; a function the data's own schema defines (a macro) is the
author's and is allowed.

Names are DuckDB 1.5's `duckdb_functions()`, lower-case; operators are functions too (`~~` is
LIKE). Scalar, aggregate and window names apply to calls in expressions, table names to calls
in FROM (`histogram` is an allowed aggregate, but its table macro runs query_table() on a name).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ...diagnostics import Diagnostic
from ...rules import diagnostic
from .positions import SqlText


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


OPERATORS = _names(
    """
    !__postfix !~~ !~~* % & && * ** + - ->> / // <-> << <=> <@ >> @ @> ^ ^@ | || ~ ~~ ~~* ~~~
    """
)

SCALAR_FUNCTIONS = _names(
    """
    abs acos acosh add age aggregate ago alias apply array_aggr array_aggregate array_append
    array_apply array_cat array_concat array_contains array_cosine_distance array_cosine_similarity
    array_cross_product array_distance array_distinct array_dot_product array_extract array_filter
    array_grade_up array_has array_has_all array_has_any array_indexof array_inner_product
    array_intersect array_length array_negative_dot_product array_negative_inner_product
    array_pop_back array_pop_front array_position array_prepend array_push_back array_push_front
    array_reduce array_resize array_reverse array_reverse_sort array_select array_slice array_sort
    array_to_json array_to_string array_to_string_comma_default array_transform array_unique
    array_value array_where array_zip ascii asin asinh atan atan2 atanh bar base64 bin bit_count
    bit_length bit_position bitstring can_cast_implicitly cardinality cast_to_type cbrt ceil ceiling
    century char_length character_length chr combine concat concat_ws constant_or_null contains cos
    cosh cot create_sort_key current_date current_localtime current_localtimestamp
    damerau_levenshtein date_add date_diff date_part date_sub date_trunc datediff datepart datesub
    datetrunc day dayname dayofmonth dayofweek dayofyear days_in_month decade decode degrees divide
    editdist3 element_at encode ends_with enum_code enum_first enum_last enum_range
    enum_range_boundary epoch epoch_ms epoch_ns epoch_us equi_width_bins era error even exp
    factorial fdiv filter finalize flatten floor fmod format formatReadableDecimalSize
    formatReadableSize format_bytes from_base64 from_binary from_hex from_json from_json_strict
    gamma gcd gen_random_uuid generate_series generate_subscripts geomean geometric_mean get_bit
    get_current_time get_current_timestamp get_type grade_up greatest greatest_common_divisor
    hamming hash hex hour icu_sort_key ilike_escape instr is_histogram_other_bin isfinite isinf
    isnan isodow isoyear jaccard jaro_similarity jaro_winkler_similarity json json_array
    json_array_length json_contains json_deserialize_sql json_exists json_extract json_extract_path
    json_extract_path_text json_extract_string json_group_array json_group_object
    json_group_structure json_keys json_merge_patch json_object json_pretty json_quote
    json_serialize_sql json_structure json_transform json_transform_strict json_type json_valid
    json_value julian last_day lcase lcm least least_common_multiple left left_grapheme len length
    length_grapheme levenshtein lgamma like_escape list_aggr list_aggregate list_any_value
    list_append list_apply list_approx_count_distinct list_avg list_bit_and list_bit_or list_bit_xor
    list_bool_and list_bool_or list_cat list_concat list_contains list_cosine_distance
    list_cosine_similarity list_count list_distance list_distinct list_dot_product list_element
    list_entropy list_extract list_filter list_first list_grade_up list_has list_has_all
    list_has_any list_histogram list_indexof list_inner_product list_intersect list_kurtosis
    list_kurtosis_pop list_last list_mad list_max list_median list_min list_mode
    list_negative_dot_product list_negative_inner_product list_pack list_position list_prepend
    list_product list_reduce list_resize list_reverse list_reverse_sort list_select list_sem
    list_skewness list_slice list_sort list_stddev_pop list_stddev_samp list_string_agg list_sum
    list_transform list_unique list_value list_var_pop list_var_samp list_where list_zip ln log
    log10 log2 lower lpad ltrim make_date make_time make_timestamp make_timestamp_ms
    make_timestamp_ns make_timestamptz make_type map map_concat map_contains map_contains_entry
    map_contains_value map_entries map_extract map_extract_value map_from_entries map_keys
    map_values md5 md5_number md5_number_lower md5_number_upper microsecond millennium millisecond
    minute mismatches mod month monthname multiply nanosecond nextafter nfc_normalize
    normalized_interval not_ilike_escape not_like_escape now nullif octet_length ord parse_dirname
    parse_dirpath parse_filename parse_formatted_bytes parse_path pg_size_pretty pg_typeof pi
    position pow power prefix printf quarter radians random range reduce regexp_escape
    regexp_extract regexp_extract_all regexp_full_match regexp_matches regexp_replace
    regexp_split_to_array regexp_split_to_table remap_struct repeat replace replace_type reverse
    right right_grapheme round round_even roundbankers row row_to_json rpad rtrim second set_bit
    sha1 sha256 sign signbit sin sinh split split_part sqrt st_asbinary st_astext st_aswkb st_aswkt
    st_crs st_geomfromwkb st_intersects_extent st_setcrs starts_with stats str_split str_split_regex
    strftime string_split string_split_regex string_to_array strip_accents strlen strpos strptime
    struct_concat struct_contains struct_extract struct_extract_at struct_has struct_indexof
    struct_insert struct_keys struct_pack struct_position struct_update struct_values substr
    substring substring_grapheme subtract suffix switch tan tanh time_bucket timetz_byte_comparable
    timezone timezone_hour timezone_minute to_base to_base64 to_binary to_centuries to_days
    to_decades to_hex to_hours to_json to_microseconds to_millennia to_milliseconds to_minutes
    to_months to_quarters to_seconds to_timestamp to_weeks to_years today transaction_timestamp
    translate trim trunc try_strptime typeof ucase unbin unhex unicode union_extract union_tag
    union_value unpivot_list upper url_decode url_encode uuid uuid_extract_timestamp
    uuid_extract_version uuidv4 uuidv7 variant_bytes_to_variant variant_extract variant_normalize
    variant_to_parquet_variant variant_typeof vector_type wavg week weekday weekofyear weighted_avg
    xor year yearweek
    """
)

# Aggregates, and the window functions DuckDB lists with them (row_number, lag, ...).
AGGREGATE_FUNCTIONS = _names(
    """
    any_value approx_count_distinct approx_quantile approx_top_k arbitrary arg_max arg_max_null
    arg_max_nulls_last arg_min arg_min_null arg_min_nulls_last argmax argmin array_agg avg bit_and
    bit_or bit_xor bitstring_agg bool_and bool_or corr count count_if count_star countif covar_pop
    covar_samp cume_dist dense_rank entropy favg fill first first_value fsum group_concat histogram
    histogram_exact kahan_sum kurtosis kurtosis_pop lag last last_value lead list listagg mad max
    max_by mean median min min_by mode nth_value ntile percent_rank product quantile quantile_cont
    quantile_disc rank rank_dense regr_avgx regr_avgy regr_count regr_intercept regr_r2 regr_slope
    regr_sxx regr_sxy regr_syy reservoir_quantile row_number sem skewness stddev stddev_pop
    stddev_samp string_agg sum sum_no_overflow sumkahan var_pop var_samp variance
    """
)

TABLE_FUNCTIONS = _names(
    """
    generate_series json_each json_tree pg_timezone_names range repeat repeat_row unnest
    """
)

# Collations by locale (`icu_collate_fr`), one function per ICU locale.
_ALLOWED_PREFIXES = ("icu_collate_",)
# Table functions DuckDB also takes in an expression: `SELECT unnest([1, 2])`.
_IN_EXPRESSIONS_TOO = frozenset({"unnest"})

_REVEALS = "reveals the server (its settings, paths, catalog or version)"
_READS_FILES = (
    "the server's files are declared data (a view under `server: duckdb: views`), "
    "never named by a statement or a parameter"
)
# Why a refused function is refused, by name prefix; the first that matches.
_REASONS = (
    (
        "read_ parquet_ sniff_csv glob arrow_scan pandas_scan seq_scan iceberg_ delta_",
        f"reads files: {_READS_FILES}",
    ),
    (
        "current_ duckdb_ pragma_ pg_ has_ version getvariable which_secret in_search_path txid_ "
        "session_user user get_block_size inet_ col_description obj_description shobj_description "
        "format_type format_pg_type map_to_pg_oid summary test_",
        _REVEALS,
    ),
    (
        "nextval currval setseed write_log sleep_ms pg_sleep enable_ disable_ truncate_",
        "changes the server's state or makes it wait",
    ),
)


def is_allowed(name: str, in_from: bool) -> bool:
    """Whether a read-only tool may call DuckDB's function `name` (lower-case): in FROM
    (`in_from`) a table function, elsewhere a scalar, aggregate or window function."""
    if in_from:
        return name in TABLE_FUNCTIONS
    return (
        name in SCALAR_FUNCTIONS
        or name in AGGREGATE_FUNCTIONS
        or name in OPERATORS
        or name in _IN_EXPRESSIONS_TOO
        or name.startswith(_ALLOWED_PREFIXES)
    )


def refusal_reason(name: str) -> str:
    """Why DuckDB's function `name` is not one a tool may call, said for its kind."""
    for prefixes, reason in _REASONS:
        if name.startswith(tuple(prefixes.split())):
            return reason
    return "is not among the DuckDB functions reviewed for tools (compiler/lower/sql/callable.py)"


# --- applying it to a statement -------------------------------------------------------------------


@dataclass(frozen=True)
class Reach:
    """What a statement calls and reads, from DuckDB's parse tree."""

    calls: list[tuple[str, int, bool]]  # (lower-case name, offset, called in FROM)
    tables: list[tuple[str, str, int]]  # (lower-case schema, lower-case name, offset) of each table read
    ctes: set[str]  # names the statement defines for itself (WITH)
    shows: list[int]  # offsets of DESCRIBE / SHOW / SUMMARIZE


@dataclass(frozen=True)
class Catalog:
    """Of the build's DuckDB: its built-in functions, its built-in views (the catalog:
    information_schema, duckdb_tables, pg_settings, ...) and the data's own tables and views."""

    functions: frozenset[str]
    system_views: frozenset[str]
    data: frozenset[str]


def build_catalog(connection: Any) -> Catalog:
    def names(sql: str) -> frozenset[str]:
        return frozenset(name.lower() for (name,) in connection.execute(sql).fetchall())

    return Catalog(
        functions=names("SELECT DISTINCT function_name FROM duckdb_functions() WHERE internal"),
        system_views=names("SELECT DISTINCT view_name FROM duckdb_views() WHERE internal"),
        data=names(
            "SELECT table_name FROM duckdb_tables() "
            "UNION SELECT view_name FROM duckdb_views() WHERE NOT internal"
        ),
    )


def reach(tree: dict[str, Any]) -> Reach:
    """Walk DuckDB's parse tree (json_serialize_sql) of a SELECT, iteratively (a deep tree
    must not exhaust Python's stack)."""
    calls: list[tuple[str, int, bool]] = []
    tables: list[tuple[str, str, int]] = []
    ctes: set[str] = set()
    shows: list[int] = []
    stack: list[tuple[Any, bool]] = [(tree, False)]
    while stack:
        node, in_from = stack.pop()
        if isinstance(node, list):
            stack.extend((item, False) for item in node)
            continue
        if not isinstance(node, dict):
            continue
        kind = node.get("type")
        at = _offset(node.get("query_location"))
        if isinstance(node.get("function_name"), str):
            calls.append((node["function_name"].lower(), at, in_from))
        elif kind == "BASE_TABLE" and isinstance(node.get("table_name"), str):
            tables.append((str(node.get("schema_name") or "").lower(), node["table_name"].lower(), at))
        elif kind == "SHOW_REF":
            shows.append(at)
        cte_map = node.get("cte_map")
        if isinstance(cte_map, dict):
            ctes |= {str(entry.get("key", "")).lower() for entry in cte_map.get("map", [])}
        for key, value in node.items():
            stack.append((value, kind == "TABLE_FUNCTION" and key == "function"))
    return Reach(calls, tables, ctes, shows)


def reach_problems(found: Reach, catalog: Catalog, where: SqlText) -> list[Diagnostic]:
    """SQL_FUNCTION_REFUSED for each call off the allow-list and each read of the server's
    catalog or of a file the statement names."""
    problems: list[Diagnostic] = []
    for name, at, in_from in found.calls:
        if name in catalog.functions and not is_allowed(name, in_from):
            problems.append(_refused(f"{name}() {refusal_reason(name)}", where, at))
    for schema, name, at in found.tables:
        if name in found.ctes and not schema:
            continue
        if schema in _CATALOG_SCHEMAS or (name in catalog.system_views and name not in catalog.data):
            shown = f"{schema}.{name}" if schema else name
            problems.append(_refused(f"'{shown}' {_REVEALS}", where, at))
        elif name not in catalog.data and _FILE_LIKE.search(name):
            problems.append(_refused(f"'{name}' names a file, and {_READS_FILES}", where, at))
    problems += [_refused(f"DESCRIBE, SHOW or SUMMARIZE {_REVEALS}", where, at) for at in found.shows]
    return problems


def token_problems(tokens: list[tuple[str, int, bool]], catalog: Catalog, where: SqlText) -> list[Diagnostic]:
    """The same, for a statement DuckDB gives no parse tree of (a write), from its name tokens
    (name, offset, whether a bracket follows): each call of a built-in function off the list,
    and each name of the catalog's schemas."""
    problems = []
    for name, at, bracketed in tokens:
        if name in _CATALOG_SCHEMAS:
            problems.append(_refused(f"'{name}' {_REVEALS}", where, at))
        elif (
            bracketed
            and name in catalog.functions
            and not (is_allowed(name, False) or is_allowed(name, True))
        ):
            problems.append(_refused(f"{name}() {refusal_reason(name)}", where, at))
    return problems


_CATALOG_SCHEMAS = frozenset({"information_schema", "pg_catalog"})
# A table name DuckDB would read as a file (a replacement scan): 'data.csv', 'dir/x'.
_FILE_LIKE = re.compile(r"[./\\:]")


def _refused(message: str, where: SqlText, at: int) -> Diagnostic:
    return diagnostic(
        "SQL_FUNCTION_REFUSED",
        message,
        where.span(at),
        "a SQL tool reads the declared data with the functions listed in compiler/lower/sql/callable.py",
    )


def _offset(location: Any) -> int:
    # DuckDB writes 2^64-1 where it has no place for a node.
    return location if isinstance(location, int) and location < 2**31 else 0
