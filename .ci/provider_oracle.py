#!/usr/bin/env python3
"""The providers' own Python SDKs as oracles for our exported tool schemas.

Reads the exports that `cargo test -p dsh-tools-tests --test provider -- exports::` writes
(`target/provider-exports.json`: every example tool, bridge-corpus type and bench schema, in
every dialect) and checks each against the pinned SDKs:

- openai strict (chat and Responses): `openai.lib._pydantic._ensure_strict_json_schema` leaves
  our parameters unchanged, key order included; deepseek strict is checked the same way (its
  strict beta asks for the same closure);
- every openai-chat and deepseek entry validates as `openai.types.chat.ChatCompletionToolParam`,
  every openai-responses entry as `openai.types.responses.FunctionToolParam`;
- anthropic strict: `anthropic.lib._parse._transform.transform_schema` leaves our `input_schema`
  unchanged (up to the benign differences normalised below); every anthropic entry validates as
  `anthropic.types.ToolParam`;
- every gemini (`parametersJsonSchema`) and gemini-openapi (`parameters`) entry validates as
  `google.genai.types.FunctionDeclaration`, and dumps back to itself (nothing dropped or coerced);
- deferred tools (`target/provider-deferral.json`, written by the same test binary): every
  Anthropic entry of the native and hosted forms validates as `ToolParam` or
  `ToolSearchToolBm25_20251119Param`, a search answer as `ToolResultBlockParam` of
  `tool_reference` blocks, the replies the parser is tested with as `ContentBlock`s; every
  OpenAI Responses entry as `FunctionToolParam`, `NamespaceToolParam` or
  `ToolSearchToolParam`, a search answer as the `tool_search_output` input item, the replies as
  `ResponseOutputItem`s (dumped back unchanged: no key the SDK does not know).

The SDKs' request types are TypedDicts, which pydantic validates without looking at unknown
keys: those are checked here too (a key the TypedDict does not declare is a failure).

Prints one line per check (`<check>: N passed, 0 failed`), the details of every failure, and a
verdict line; exits 1 when any check failed. Run by `.ci/provider-oracle.sh`:

    python .ci/provider_oracle.py [target/provider-exports.json [target/provider-deferral.json]]
"""

from __future__ import annotations

import copy
import importlib.metadata
import json
import sys
import typing
import warnings
from collections import Counter, defaultdict

# The SDK versions this oracle is written against (.ci/provider-oracle.sh installs them).
PINNED = {"openai": "3.57.0", "anthropic": "2.14.0", "google-genai": "3.6.1"}

import pydantic  # noqa: E402
from anthropic.lib._parse._transform import transform_schema  # noqa: E402
from anthropic.types import ToolParam  # noqa: E402
from google.genai.types import FunctionDeclaration  # noqa: E402
from openai.lib._pydantic import _ensure_strict_json_schema  # noqa: E402
from openai.types.chat import ChatCompletionToolParam  # noqa: E402
from openai.types.responses import FunctionToolParam  # noqa: E402
from typing_extensions import NotRequired, Required, is_typeddict  # noqa: E402
from anthropic.types import (  # noqa: E402
    ContentBlock as AnthropicContentBlock,
    ToolReferenceBlockParam,
    ToolResultBlockParam,
    ToolSearchToolBm25_20251119Param,
)
from openai.types.responses import (  # noqa: E402
    NamespaceToolParam,
    ResponseOutputItem,
    ToolSearchToolParam,
)
from openai.types.responses.response_tool_search_output_item_param_param import (  # noqa: E402
    ResponseToolSearchOutputItemParamParam,
)

# ---- comparing JSON ----


def differences(ours, theirs, path="#", ordered=False):
    """Where `theirs` differs from `ours`, as `path: what` strings (JSON-pointer paths).

    With `ordered` true, a different key order in an object is a difference too; with
    `ordered="properties"`, only in a `properties` object (the order the model sees the
    arguments in)."""
    out = []
    if isinstance(ours, dict) and isinstance(theirs, dict):
        for k in ours:
            if k not in theirs:
                out.append(f"{path}: removed {k!r} (ours: {json.dumps(ours[k])[:120]})")
        for k in theirs:
            if k not in ours:
                out.append(f"{path}: added {k!r}: {json.dumps(theirs[k])[:120]}")
        for k in ours:
            if k in theirs:
                out += differences(ours[k], theirs[k], f"{path}/{k}", ordered)
        order_matters = ordered is True or (ordered == "properties" and path.endswith("/properties"))
        if order_matters and not out and list(ours) != list(theirs):
            out.append(f"{path}: keys reordered {list(ours)} -> {list(theirs)}")
    elif isinstance(ours, list) and isinstance(theirs, list):
        if len(ours) != len(theirs):
            out.append(f"{path}: {len(ours)} items -> {len(theirs)}")
        for i, (a, b) in enumerate(zip(ours, theirs)):
            out += differences(a, b, f"{path}/{i}", ordered)
    elif type(ours) is not type(theirs) and not (is_number(ours) and is_number(theirs)):
        out.append(f"{path}: {json.dumps(ours)[:120]} -> {json.dumps(theirs)[:120]}")
    elif ours != theirs:
        out.append(f"{path}: {json.dumps(ours)[:120]} -> {json.dumps(theirs)[:120]}")
    return out


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def numbers_as_floats(v):
    """`v` with every number a float. Gemini's `Schema` holds `minimum` / `maximum` as doubles
    (the API's proto does too), so an integer bound beyond 2^53 (u64::MAX) comes back rounded:
    the same double the API would read from our JSON. Our validator still checks the exact
    bound."""
    if isinstance(v, dict):
        return {k: numbers_as_floats(x) for k, x in v.items()}
    if isinstance(v, list):
        return [numbers_as_floats(x) for x in v]
    if is_number(v):
        return float(v)
    return v


# ---- TypedDicts: unknown keys ----


def unwrap(tp):
    """`Required[T]`, `NotRequired[T]`, `Optional[T]` → `T` (a union of several stays)."""
    while True:
        origin = typing.get_origin(tp)
        if origin in (Required, NotRequired, typing.Required, typing.NotRequired):
            tp = typing.get_args(tp)[0]
            continue
        if origin is typing.Union:
            args = [a for a in typing.get_args(tp) if a is not type(None)]
            if len(args) == 1:
                tp = args[0]
                continue
        return tp


def unknown_keys(value, tp, path="$"):
    """Keys of `value` that the TypedDict `tp` (recursively, through TypedDict-typed fields)
    does not declare."""
    if not (is_typeddict(tp) and isinstance(value, dict)):
        return []
    hints = typing.get_type_hints(tp, include_extras=True)
    out = [f"{path}.{k}: not a key of {tp.__name__}" for k in value if k not in hints]
    for k, v in value.items():
        if k in hints:
            out += unknown_keys(v, unwrap(hints[k]), f"{path}.{k}")
    return out


ADAPTERS = {}


def validate_typeddict(entry, tp):
    """Validates `entry` as the SDK request type `tp`: pydantic, then unknown keys."""
    adapter = ADAPTERS.get(tp)
    if adapter is None:
        adapter = ADAPTERS[tp] = pydantic.TypeAdapter(tp)
    try:
        adapter.validate_python(entry, strict=True)
    except pydantic.ValidationError as e:
        return [str(e).replace("\n", " | ")]
    return unknown_keys(entry, tp)


# ---- the SDK helpers, and their benign differences ----


def openai_strict(params):
    """What the OpenAI SDK's strict helper makes of our strict parameters (a copy: it mutates)."""
    return _ensure_strict_json_schema(copy.deepcopy(params), path=(), root=params)


def anthropic_transform(params):
    """What the Anthropic SDK's `transform_schema(json_schema)` makes of our strict
    `input_schema` (it builds a new dict; the copy guards against changes in that)."""
    return transform_schema(copy.deepcopy(params))


def anthropic_normalise(ours):
    """Our strict `input_schema` as `transform_schema` spells the same schema. Each difference
    normalised here is benign:

    - Key order: `transform_schema` rebuilds every node in its own fixed key order. JSON Schema
      keywords are unordered, and the order of `properties` (the one order that matters to the
      model) is kept by it and still compared; other key order is ignored.
    - `enum` beside `type`: `transform_schema` drops `type` from a node with a primitive `enum` or
      `const`. When every member has that type, the `type` says nothing the `enum` does not, so
      it is dropped from ours too (a member of another type would keep the difference).
    - `properties: {}`: `transform_schema` gives every object a `properties` map. An object
      without `properties` (a tool with no arguments) and one with `properties: {}` admit the
      same values, and `additionalProperties: false` is there either way.
    - `default`: `transform_schema` moves it into the description, like the keywords the API
      refuses. Anthropic's tool-use schema docs list "default property for all supported types"
      among the supported features (and the 400s are for the numeric, string-length and item
      constraints, which we do move), so we keep it; the SDK's move is applied to ours, in the
      SDK's wording (`<description>\n\n{default: <Python str of the value>}`).
    """
    if isinstance(ours, list):
        return [anthropic_normalise(x) for x in ours]
    if not isinstance(ours, dict):
        return ours
    out = {}
    for k, v in ours.items():
        if k in ("properties", "$defs"):
            out[k] = {name: anthropic_normalise(s) for name, s in v.items()}
        elif k in ("items", "anyOf", "allOf", "oneOf", "additionalProperties"):
            out[k] = anthropic_normalise(v)
        else:
            out[k] = v
    members = ours.get("enum") if "enum" in ours else ([ours["const"]] if "const" in ours else None)
    if isinstance(members, list) and members and "type" in ours:
        if all(has_type(m, ours["type"]) for m in members):
            del out["type"]
    if ours.get("type") == "object" and "properties" not in ours:
        out["properties"] = {}
    if "default" in out:
        value = out.pop("default")
        description = out.get("description")
        out["description"] = (description + "\n\n" if description is not None else "") + \
            f"{{default: {value}}}"
    return out


def openai_normalise_deepseek(ours):
    """Our deepseek strict parameters as the OpenAI strict helper spells them: it drops
    `default: null` ("no meaningful distinction": the property is nullable and required either
    way). DeepSeek's strict beta lists `default` (our openai strict dialects drop it), so ours
    keeps it; a non-null default is left alone by the helper and compared as is."""
    if isinstance(ours, list):
        return [openai_normalise_deepseek(x) for x in ours]
    if not isinstance(ours, dict):
        return ours
    return {
        k: ({n: openai_normalise_deepseek(x) for n, x in v.items()} if k == "properties"
            else openai_normalise_deepseek(v))
        for k, v in ours.items()
        if not (k == "default" and v is None)
    }


def has_type(value, ty):
    return {
        "string": isinstance(value, str),
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "number": is_number(value),
        "boolean": isinstance(value, bool),
        "null": value is None,
    }.get(ty, False)


def gemini_check(entry, key):
    """`FunctionDeclaration.model_validate(entry)`, then the model dumped back must be the
    entry (a field the SDK dropped or coerced is a failure)."""
    other = "parameters" if key == "parametersJsonSchema" else "parametersJsonSchema"
    problems = []
    if key not in entry or other in entry:
        problems.append(f"the entry must carry `{key}` and not `{other}`")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            declaration = FunctionDeclaration.model_validate(entry)
        except pydantic.ValidationError as e:
            return problems + [str(e).replace("\n", " | ")]
    problems += [f"SDK warning: {w.message}" for w in caught]
    # `exclude_unset`: what the entry gave, explicit nulls (`default: null`) included.
    back = declaration.model_dump(mode="json", by_alias=True, exclude_unset=True)
    problems += differences(numbers_as_floats(entry), numbers_as_floats(back), "$")
    return problems


# ---- deferred tools: the native forms ----


def validate_model(value, tp):
    """Validates `value` as the SDK response type `tp` (a pydantic model or a union of them),
    then dumps it back: a key the SDK does not know, dropped silently by its models, is a
    failure, as is one it coerced."""
    adapter = ADAPTERS.get(tp)
    if adapter is None:
        adapter = ADAPTERS[tp] = pydantic.TypeAdapter(tp)
    try:
        model = adapter.validate_python(value)
    except pydantic.ValidationError as e:
        return [str(e).replace("\n", " | ")]
    back = adapter.dump_python(model, mode="json", exclude_unset=True, by_alias=True)
    return differences(value, back, "$")


def responses_tool(tool):
    """A tool of an OpenAI Responses list or `tool_search_output`, as the SDK type its `type`
    names."""
    kind = tool.get("type")
    tp = {"function": FunctionToolParam, "namespace": NamespaceToolParam,
          "tool_search": ToolSearchToolParam}.get(kind)
    if tp is None:
        return [f"a tool of type {kind!r}, not one the native forms send"]
    problems = validate_typeddict(tool, tp)
    if kind == "namespace":
        for inner in tool.get("tools", []):
            problems += validate_typeddict(inner, FunctionToolParam)
    return problems


def deferral_check(item):
    """The SDK check of one deferral item: its name and the problems."""
    dialect, kind, value = item["dialect"], item["kind"], item["value"]
    if dialect == "anthropic":
        if kind == "tool":
            if value.get("type", "").startswith("tool_search_tool_bm25"):
                return ("anthropic search tool validates as ToolSearchToolBm25_20251119Param",
                        validate_typeddict(value, ToolSearchToolBm25_20251119Param))
            return ("anthropic deferred-form entry validates as ToolParam",
                    validate_typeddict(value, ToolParam))
        if kind == "search_result":
            problems = validate_typeddict(value, ToolResultBlockParam)
            for block in value.get("content", []):
                problems += validate_typeddict(block, ToolReferenceBlockParam)
            return ("anthropic search answer validates as ToolResultBlockParam", problems)
        if kind == "reply":
            problems = []
            for block in value["content"]:
                problems += validate_model(block, AnthropicContentBlock)
            return ("anthropic reply blocks we parse validate as ContentBlock", problems)
    if dialect == "openai-responses":
        if kind == "tool":
            return ("openai-responses deferred-form entry validates as its tool type",
                    responses_tool(value))
        if kind == "search_result":
            problems = validate_typeddict(value, ResponseToolSearchOutputItemParamParam)
            for tool in value.get("tools", []):
                problems += responses_tool(tool)
            return ("openai-responses search answer validates as tool_search_output", problems)
        if kind == "reply":
            problems = []
            for output in value["output"]:
                problems += validate_model(output, ResponseOutputItem)
            return ("openai-responses reply items we parse validate as ResponseOutputItem",
                    problems)
    return (f"deferral item {dialect}/{kind}", [f"unknown item {dialect}/{kind}"])


# ---- known mismatches: our output is wrong there, and the fix is not in yet ----

# (check, dialect name, tool) -> (a part of the problem it must show, why). Each is reported on
# its own line and not counted as passed; one that no longer shows (fixed, or changed) fails the
# run, so the list cannot go stale.
KNOWN = {
    # (empty: the typeless-schema mismatch found here is fixed: strict dialects now refuse a
    # `serde_json::Value` field with a problem naming the fix.)
}


# ---- the run ----


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "target/provider-exports.json"
    versions = {p: importlib.metadata.version(p) for p in PINNED}
    if versions != PINNED:
        print(f"provider-oracle: SDK versions {versions}, want {PINNED}")
        return 1
    with open(path, encoding="utf-8") as f:
        exports = json.load(f)

    passed = Counter()
    failed = defaultdict(list)
    known = defaultdict(list)

    def check(name, e, run):
        """Runs one check of export `e`: `run()` gives its problems. An SDK that raises (not
        only pydantic's `ValidationError`) fails the check with what it raised."""
        try:
            problems = run()
        except Exception as exc:  # noqa: BLE001 - whatever the SDK raises is the finding
            problems = [f"{type(exc).__name__}: {exc}".replace("\n", " | ")]
        tag = e["dialect"] + (" (strict)" if e["strict"] else "")
        expected = KNOWN.get((name, tag, e["tool"]))
        if expected is not None:
            needle, why = expected
            if any(needle in p for p in problems):
                known[name].append((e, why))
                return
            problems = [f"listed in KNOWN ({why}) but shows {problems or 'no problem'}: "
                        "update or remove the entry"]
        if problems:
            failed[name].append((e, problems))
        else:
            passed[name] += 1

    for e in exports:
        dialect, strict, entry, params = e["dialect"], e["strict"], e["entry"], e["parameters"]
        if dialect in ("openai-chat", "openai-responses", "deepseek") and strict:
            if dialect == "deepseek":
                check("openai strict helper leaves deepseek (strict) unchanged", e,
                      lambda: differences(openai_normalise_deepseek(params), openai_strict(params),
                                          ordered=True))
            else:
                check("openai _ensure_strict_json_schema leaves strict parameters unchanged", e,
                      lambda: differences(params, openai_strict(params), ordered=True))
        if dialect in ("openai-chat", "deepseek"):
            check(f"{dialect} entry validates as openai ChatCompletionToolParam", e,
                  lambda: validate_typeddict(entry, ChatCompletionToolParam))
        if dialect == "openai-responses":
            check("openai-responses entry validates as openai FunctionToolParam", e,
                  lambda: validate_typeddict(entry, FunctionToolParam))
        if dialect == "anthropic":
            if strict:
                check("anthropic transform_schema leaves strict input_schema unchanged", e,
                      lambda: differences(anthropic_normalise(params), anthropic_transform(params),
                                          ordered="properties"))
            check("anthropic entry validates as anthropic ToolParam", e,
                  lambda: validate_typeddict(entry, ToolParam))
        if dialect in ("gemini", "gemini-openapi"):
            key = "parametersJsonSchema" if dialect == "gemini" else "parameters"
            check(f"{dialect} entry validates as genai FunctionDeclaration", e,
                  lambda: gemini_check(entry, key))

    deferral_path = sys.argv[2] if len(sys.argv) > 2 else "target/provider-deferral.json"
    with open(deferral_path, encoding="utf-8") as f:
        deferral = json.load(f)
    kinds = Counter()
    for item in deferral:
        e = {"dialect": item["dialect"], "strict": item["strict"],
             "tool": f"{item['form']} {item['kind']}"}
        name, _ = deferral_check(item)
        kinds[(item["dialect"], item["kind"])] += 1
        check(name, e, lambda item=item: deferral_check(item)[1])
    for dialect in ("anthropic", "openai-responses"):
        for kind in ("tool", "search_result", "reply"):
            if kinds[(dialect, kind)] == 0:
                failed[f"deferral items of kind {kind}"].append(
                    ({"dialect": dialect, "strict": False, "tool": kind},
                     ["none in " + deferral_path]))

    names = sorted(set(passed) | set(failed) | set(known))
    for name in names:
        extra = f", {len(known[name])} known mismatch" if known[name] else ""
        print(f"{name}: {passed[name]} passed, {len(failed[name])} failed{extra}")
    for name in names:
        for e, why in known[name]:
            tag = e["dialect"] + (" (strict)" if e["strict"] else "")
            print(f"KNOWN {name}: {tag} {e['tool']}: {why}")
    for name in names:
        for e, problems in failed[name]:
            tag = e["dialect"] + (" (strict)" if e["strict"] else "")
            print(f"FAILED {name}: {tag} {e['tool']}")
            for p in problems[:20]:
                print(f"    {p}")
            if len(problems) > 20:
                print(f"    ... {len(problems) - 20} more")
    total_passed = sum(passed.values())
    total_failed = sum(len(v) for v in failed.values())
    sdks = ", ".join(f"{p} {v}" for p, v in versions.items())
    tools = len({e["tool"] for e in exports})
    total_known = sum(len(v) for v in known.values())
    print(f"provider-oracle checks: {total_passed} passed, {total_failed} failed, "
          f"{total_known} known mismatch over "
          f"{len(exports)} exports of {tools} tools in {len({(e['dialect'], e['strict']) for e in exports})} "
          f"dialects ({sdks}, pydantic {pydantic.VERSION}, Python {sys.version.split()[0]})")
    return 1 if total_failed else 0


if __name__ == "__main__":
    sys.exit(main())
