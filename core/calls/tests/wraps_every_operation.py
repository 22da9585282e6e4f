#!/usr/bin/python3
"""The call layer wraps every backend operation: each virtual of core::BackendImpl
(core/backend_impl.hpp) has an override in CallLayer (core/calls/call_layer.cpp). A virtual
without one would be inherited from BackendImpl, so that call would bypass the call layer on every
real backend (no numbering, flight record, DIST_DEBUG=detail check or diagnosis) and still compile.

usage: wraps_every_operation.py <source root> [<backend_impl.hpp> <call_layer.cpp>]"""
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else "."
header = sys.argv[2] if len(sys.argv) > 2 else f"{root}/core/backend_impl.hpp"
layer = sys.argv[3] if len(sys.argv) > 3 else f"{root}/core/calls/call_layer.cpp"


def strip_comments(text):
    return re.sub(r"//[^\n]*", "", text)


with open(header) as f:
    declared = strip_comments(f.read())
virtuals = set(re.findall(r"\bvirtual\s+[^;{(]*?\b(\w+)\s*\(", declared))
virtuals.discard("BackendImpl")  # the destructor (~BackendImpl)
if len(virtuals) < 10:
    sys.exit(f"found only {len(virtuals)} virtuals in {header}: the pattern no longer matches it")

with open(layer) as f:
    source = strip_comments(f.read())
start = source.find("class CallLayer final : public BackendImpl {")
if start < 0:
    sys.exit(f"no 'class CallLayer final : public BackendImpl' in {layer}")
depth, end = 0, start
for end in range(source.index("{", start), len(source)):
    depth += {"{": 1, "}": -1}.get(source[end], 0)
    if depth == 0:
        break
body = source[start:end]
# "name(...) [const] override", the parameter lists possibly spanning lines.
overridden = set(re.findall(r"\b(\w+)\s*\([^()]*(?:\([^()]*\)[^()]*)*\)\s*(?:const\s*)?override\b",
                            body))

missing = sorted(virtuals - overridden)
if missing:
    sys.exit("CallLayer does not override " + ", ".join(f"BackendImpl::{m}" for m in missing) +
             ": those calls bypass the call layer on every real backend. Add a forwarding "
             "override in core/calls/call_layer.cpp (docs/adding-a-collective.md)")
print(f"CallLayer overrides all {len(virtuals)} virtuals of BackendImpl")
