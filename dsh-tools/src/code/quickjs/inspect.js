// The log inspector (Node's util.inspect, in short; Code Mode spec §3.7), compiled by the
// bootstrap the first time a log entry needs it: most runs never log anything but strings, and
// compiling it costs a fifth of the bootstrap. It is the body of a function whose parameters are
// the intrinsics the bootstrap captured, and it names no global, so a program that rewrote
// globals before its first log does not change which functions it calls. (Those functions may
// still consult what a program can rewrite, as the bootstrap's own `describe` does: a RegExp's
// `exec`, say. What that reaches is the program's own log text, never host state.)
// Returns `inspect(value, depth, seen)`.
'use strict';
function quote(s) {
  const q = apply(regexpTest, /'/, [s]) && !apply(regexpTest, /"/, [s]) ? '"' : "'";
  let body = apply(stringReplace, s, [/\\/g, '\\\\']);
  body = apply(stringReplace, body, [/\n/g, '\\n']);
  if (q === "'") body = apply(stringReplace, body, [/'/g, "\\'"]);
  return q + body + q;
}

function key(k) {
  if (typeof k === 'symbol') return '[' + apply(symbolToString, k, []) + ']';
  return apply(regexpTest, IDENT, [k]) ? k : quote(k);
}

function inspect(v, depth, seen) {
  switch (typeof v) {
    case 'string':
      return quote(v);
    case 'number':
      return v === 0 && 1 / v < 0 ? '-0' : StringC(v);
    case 'bigint':
      return apply(bigintToString, v, []) + 'n';
    case 'boolean':
      return v ? 'true' : 'false';
    case 'undefined':
      return 'undefined';
    case 'symbol':
      return apply(symbolToString, v, []);
    case 'function': {
      const d = getDesc(v, 'name');
      const name = d && typeof d.value === 'string' ? d.value : '';
      return name ? '[Function: ' + name + ']' : '[Function (anonymous)]';
    }
  }
  if (v === null) return 'null';
  if (apply(setHas, seen, [v])) return '[Circular]';
  const array = isArray(v);
  if (depth > 4) return array ? '[Array]' : '[Object]';
  const proto = getProto(v);
  if (!array && proto !== ObjectProto && proto !== null) {
    let isError = false;
    for (let p = proto; p !== null; p = getProto(p)) {
      if (p === ErrorC.prototype) {
        isError = true;
        break;
      }
    }
    if (isError) return describe(v);
  }
  apply(setAdd, seen, [v]);
  const parts = list();
  let n = 0;
  const keys = ownKeys(v);
  let shown = 0;
  let more = 0;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    if (array && k === 'length') continue;
    const d = getDesc(v, k);
    if (d === undefined || !d.enumerable) continue;
    if (array && shown >= 100) {
      more++;
      continue;
    }
    let text;
    if (apply(hasOwn, d, ['value'])) text = inspect(d.value, depth + 1, seen);
    else if (d.get && d.set) text = '[Getter/Setter]';
    else if (d.get) text = '[Getter]';
    else text = '[Setter]';
    const index = array && typeof k === 'string' && apply(regexpTest, /^(0|[1-9][0-9]*)$/, [k]);
    parts[n++] = index ? text : key(k) + ': ' + text;
    shown++;
  }
  apply(setDelete, seen, [v]);
  if (more > 0) parts[n++] = '... ' + more + ' more item' + (more > 1 ? 's' : '');
  let body = '';
  for (let i = 0; i < n; i++) body += (i ? ', ' : '') + parts[i];
  let prefix = '';
  if (!array && proto === null) prefix = '[Object: null prototype] ';
  else if (!array && proto !== ObjectProto) {
    const c = proto && getDesc(proto, 'constructor');
    const f = c && c.value;
    const nd = typeof f === 'function' ? getDesc(f, 'name') : undefined;
    if (nd && typeof nd.value === 'string' && nd.value) prefix = nd.value + ' ';
  }
  if (array) return n === 0 ? '[]' : '[ ' + body + ' ]';
  return prefix + (n === 0 ? '{}' : '{ ' + body + ' }');
}

return inspect;
