#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
"""Generate libcuda's entry-point table from the CUDA toolkit's headers.

Inputs:
  cuda.h           every exported driver function.  It is run through the C
                   preprocessor three times (default, with
                   CUDA_API_PER_THREAD_DEFAULT_STREAM, with
                   __CUDA_API_VERSION_INTERNAL) and every `CUresult cu*(...)`
                   declaration of the three outputs is a symbol to export:
                   together they name the plain, _vN, _ptds and _ptsz
                   variants the real libcuda.so.1 exports.
  cudaTypedefs.h   one PFN_<base>_v<version>[_ptds|_ptsz] typedef per variant;
                   <version> is the CUDA version the variant appeared in.
                   For one base name and one stream kind, the k-th smallest
                   version belongs to the k-th variant in the order
                   base, base_v2, base_v3, ...; each pairing is checked by
                   comparing the typedef's parameter types with the
                   declaration's, and a mismatch stops the build.
  libcuda/*.c      the implemented symbols: definitions written
                   `CUresult CUDAAPI cuName(` at the start of a line,
                   `MDGPU_CU_ALIAS(cuName, cuImplemented)` lines and
                   `MDGPU_CU_PTSZ(cuName_ptsz, cuImplemented, ...)` lines
                   (the second name may start the next line).

Outputs:
  --c FILE         C source: a stub for every symbol not implemented
                   (returns CUDA_ERROR_NOT_SUPPORTED, logs its name once),
                   the cuGetProcAddress table and the CUresult names and
                   descriptions.
  --doc FILE       the Markdown table of Documentation/libcuda.md.
"""
import argparse
import os
import re
import subprocess
import sys

DECL_RE = re.compile(r'\bCUresult\s+(cu\w+)\s*\(')
PFN_RE = re.compile(
    r'PFN_(cu\w+?)_v(\d+)(_ptds|_ptsz)?\s*\)\s*\(')
VARIANT_RE = re.compile(r'^(cu\w+?)(?:_v(\d+))?(_ptds|_ptsz)?$')
IMPL_RE = re.compile(r'^CUresult CUDAAPI (cu\w+)\(', re.M)
ALIAS_RE = re.compile(r'^MDGPU_CU_ALIAS\((cu\w+),\s*(cu\w+)\)', re.M)
PTSZ_RE = re.compile(r'^MDGPU_CU_PTSZ\((cu\w+),\s*(cu\w+),', re.M)
MODES = ([], ['-DCUDA_API_PER_THREAD_DEFAULT_STREAM'],
         ['-D__CUDA_API_VERSION_INTERNAL'])


def die(msg):
    sys.stderr.write('gen-entry-points: %s\n' % msg)
    sys.exit(1)


def paren_body(text, start):
    """Text between the '(' at text[start] and its matching ')'."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == '(':
            depth += 1
        elif text[i] == ')':
            depth -= 1
            if depth == 0:
                return text[start + 1:i], i
    die('unbalanced parentheses')


def norm_params(params):
    """Parameter types only, without names and without _vN type suffixes,
    so that a typedef and a declaration of one variant compare equal."""
    out = []
    for p in split_top(params):
        p = re.sub(r'/\*.*?\*/', '', p)
        p = re.sub(r'\b(\w+)_v\d+\b', r'\1', p)
        p = re.sub(r'\bunsigned(?!\s+(int|char|short|long))', 'unsigned int',
                   p)
        toks = re.findall(r'\w+|\*|\[|\]|\S', p)
        if len(toks) >= 2 and re.match(r'\w+$', toks[-1]) and \
                toks[-1] not in ('int', 'char', 'void', 'long', 'short'):
            toks = toks[:-1]
        out.append(' '.join(toks))
    return tuple(x for x in out if x not in ('', 'void'))


def split_top(params):
    parts, depth, cur = [], 0, ''
    for ch in params:
        if ch == '(':
            depth += 1
        elif ch == ')':
            depth -= 1
        if ch == ',' and depth == 0:
            parts.append(cur)
            cur = ''
        else:
            cur += ch
    parts.append(cur)
    return [p.strip() for p in parts]


def declarations(cc, incdir):
    """{symbol: normalised parameter types} over the three header modes."""
    decls = {}
    for mode in MODES:
        cmd = cc.split() + ['-E', '-P', '-I', incdir] + mode + ['-x', 'c', '-']
        try:
            text = subprocess.run(cmd, input='#include <cuda.h>\n',
                                  capture_output=True, text=True,
                                  check=True).stdout
        except (OSError, subprocess.CalledProcessError) as e:
            die('%s: %s' % (' '.join(cmd), e))
        for m in DECL_RE.finditer(text):
            before = text[max(0, m.start() - 40):m.start()]
            if re.search(r'\bstatic\b[^;{}]*$', before):
                continue        # header-only inline wrappers
            body, _ = paren_body(text, m.end() - 1)
            decls.setdefault(m.group(1), norm_params(body))
    return decls


def typedef_versions(path):
    """[(base, version, kind, params)] from cudaTypedefs.h."""
    text = open(path).read()
    out = []
    for m in PFN_RE.finditer(text):
        body, _ = paren_body(text, m.end() - 1)
        out.append((m.group(1), int(m.group(2)), m.group(3) or '',
                    norm_params(body)))
    return out


def split_variant(sym):
    m = VARIANT_RE.match(sym)
    return m.group(1), int(m.group(2) or 1), m.group(3) or ''


def build_table(decls, typedefs):
    """[(base, version, kind, symbol)]: what cuGetProcAddress resolves."""
    variants = {}
    for sym in decls:
        base, n, kind = split_variant(sym)
        variants.setdefault((base, kind), []).append((n, sym))
    # A declared name whose "base" is itself a declared variant of another
    # base (cuFoo_v2 declared, cuFoo not) is still cuFoo's variant.
    vers = {}
    for base, ver, kind, params in typedefs:
        vers.setdefault((base, kind), []).append((ver, params))
    table, errors = [], []
    for key in sorted(variants):
        syms = sorted(variants[key])
        vs = sorted(vers.get(key, []))
        base, kind = key
        if not vs:
            # No typedef: the variant exists in every version cuda.h
            # describes (cuGetProcAddress itself, for one).
            for n, sym in syms:
                if len(syms) > 1:
                    errors.append('%s: several variants, no typedef' % sym)
                table.append((base, 0, kind, sym))
            continue
        if len(vs) != len(syms):
            errors.append('%s%s: %d variants, %d typedef versions' %
                          (base, kind, len(syms), len(vs)))
            continue
        for (n, sym), (ver, params) in zip(syms, vs):
            if params != decls[sym]:
                errors.append('%s (v%d): typedef %s != declaration %s' %
                              (sym, ver, params, decls[sym]))
            table.append((base, ver, kind, sym))
    for key in vers:
        if key not in variants:
            errors.append('typedef for %s%s, no declaration' % key)
    if errors:
        die('header pairing failed:\n  ' + '\n  '.join(errors))
    table.sort(key=lambda e: (e[0], e[2], e[1]))
    return table


def implemented(srcdir, decls):
    impl, aliases = set(), {}
    for name in sorted(os.listdir(srcdir)):
        if not name.endswith('.c'):
            continue
        text = open(os.path.join(srcdir, name)).read()
        impl.update(IMPL_RE.findall(text))
        for new, old in ALIAS_RE.findall(text) + PTSZ_RE.findall(text):
            aliases[new] = old
    for sym in list(impl) + list(aliases) + list(aliases.values()):
        if sym not in decls:
            die('%s is implemented but cuda.h does not declare it' % sym)
    for new, old in aliases.items():
        if old not in impl:
            die('%s is a variant of %s, which is not implemented' %
                (new, old))
    return impl | set(aliases)


def results(incdir):
    """[(name, value, description)] of enum cudaError_enum."""
    text = open(os.path.join(incdir, 'cuda.h')).read()
    m = re.search(r'typedef enum cudaError_enum \{(.*?)\} CUresult;', text,
                  re.S)
    if not m:
        die('cuda.h has no enum cudaError_enum')
    out = []
    for doc, name, val in re.findall(
            r'/\*\*(.*?)\*/\s*(CUDA_\w+)\s*=\s*(\d+)', m.group(1), re.S):
        doc = ' '.join(l.strip().lstrip('*').strip()
                       for l in doc.splitlines()).strip()
        doc = re.sub(r'::(\w+)', r'\1', doc)
        doc = re.sub(r'\\p ', '', doc)
        first = re.split(r'(?<=[a-z0-9)])\. ', doc)[0].rstrip('.')
        out.append((name, int(val), first))
    if not any(n == 'CUDA_ERROR_NOT_SUPPORTED' for n, _, _ in out):
        die('cuda.h has no CUDA_ERROR_NOT_SUPPORTED')
    return out


def cversion(incdir):
    text = open(os.path.join(incdir, 'cuda.h')).read()
    m = re.search(r'#define CUDA_VERSION (\d+)', text)
    if not m:
        die('cuda.h has no CUDA_VERSION')
    return int(m.group(1))


def cstr(s):
    return '"' + s.replace('\\', '\\\\').replace('"', '\\"') + '"'


def write_c(path, decls, table, impl, errs, version):
    syms = sorted(decls)
    stubs = [s for s in syms if s not in impl]
    notsup = [v for n, v, _ in errs if n == 'CUDA_ERROR_NOT_SUPPORTED'][0]
    o = []
    o.append('/* Generated by libcuda/gen-entry-points.py from cuda.h %d. '
             'Do not edit. */' % version)
    o.append('#include <stddef.h>')
    o.append('#include "entry.h"\n')
    o.append('_Static_assert(MDGPU_CU_HEADER_VERSION == %d, '
             '"entry points generated from another cuda.h");\n' % version)
    o.append('const char *const mdgpu_cu_stub_names[] = {')
    for s in stubs:
        o.append('\t%s,' % cstr(s))
    o.append('};')
    o.append('const unsigned mdgpu_cu_stub_count = %d;' % len(stubs))
    o.append('_Atomic unsigned char mdgpu_cu_stub_logged[%d];\n' %
             max(len(stubs), 1))
    o.append('/* Each symbol not implemented: CUDA_ERROR_NOT_SUPPORTED, '
             'its name logged once. */')
    for i, s in enumerate(stubs):
        o.append('int %s(void);' % s)
        o.append('int %s(void) { return mdgpu_cu_unsupported(%d); }' % (s, i))
    o.append('')
    o.append('/* Implemented symbols, defined in the libcuda sources. */')
    for s in syms:
        if s in impl:
            o.append('int %s(void);' % s)
    o.append('\nconst struct mdgpu_cu_proc mdgpu_cu_procs[] = {')
    for base, ver, kind, sym in table:
        o.append('\t{ %s, %d, %d, %d, (mdgpu_cu_fn)%s },' %
                 (cstr(base), ver, 1 if kind else 0,
                  1 if sym in impl else 0, sym))
    o.append('};')
    o.append('const unsigned mdgpu_cu_proc_count = %d;\n' % len(table))
    o.append('const struct mdgpu_cu_result mdgpu_cu_results[] = {')
    for name, val, desc in errs:
        o.append('\t{ %d, %s, %s },' % (val, cstr(name), cstr(desc)))
    o.append('};')
    o.append('const unsigned mdgpu_cu_result_count = %d;' % len(errs))
    o.append('const int mdgpu_cu_not_supported = %d;' % notsup)
    with open(path + '.tmp', 'w') as f:
        f.write('\n'.join(o) + '\n')
    os.replace(path + '.tmp', path)


def write_doc(path, decls, table, impl, version):
    o = []
    o.append('<!-- Generated by libcuda/gen-entry-points.py --doc from '
             'cuda.h %d. -->' % version)
    n_impl = len([s for s in decls if s in impl])
    o.append('%d of the %d symbols cuda.h %d declares are implemented; '
             'every other one returns `CUDA_ERROR_NOT_SUPPORTED`.\n' %
             (n_impl, len(decls), version))
    o.append('| cuGetProcAddress name | since | stream | exported symbol '
             '| status |')
    o.append('| --- | --- | --- | --- | --- |')
    for base, ver, kind, sym in table:
        o.append('| %s | %s | %s | `%s` | %s |' %
                 (base, ver if ver else 'any',
                  'per-thread' if kind else 'legacy', sym,
                  '**implemented**' if sym in impl else 'not supported'))
    with open(path, 'w') as f:
        f.write('\n'.join(o) + '\n')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--include', default='/usr/local/cuda/include')
    ap.add_argument('--src', default=os.path.dirname(
        os.path.abspath(__file__)))
    ap.add_argument('--cc', default=os.environ.get('CC', 'cc'))
    ap.add_argument('--c')
    ap.add_argument('--doc')
    args = ap.parse_args()
    decls = declarations(args.cc, args.include)
    table = build_table(decls, typedef_versions(
        os.path.join(args.include, 'cudaTypedefs.h')))
    impl = implemented(args.src, decls)
    version = cversion(args.include)
    if args.c:
        write_c(args.c, decls, table, impl, results(args.include), version)
    if args.doc:
        write_doc(args.doc, decls, table, impl, version)


if __name__ == '__main__':
    main()
