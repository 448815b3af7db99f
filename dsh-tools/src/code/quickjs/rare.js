// Two things the bootstrap needs only sometimes, compiled by it the first time either is: the
// walk of a value the host cannot read itself (`toTape`: a Proxy, whose traps run here; a value
// over the host's budget or its cap), and the text for a call of a member a namespace does not
// have (`notATool`). Most runs need neither, and compiling them took over a third of the
// bootstrap's time. As the log inspector (inspect.js), this is the body of a function whose
// parameters are the intrinsics the bootstrap captured before any program ran, and it names no
// global.
// Returns `{toTape, notATool}` (no prototype).
'use strict';
const EXIT = create(null);

// Argument lists for `apply`, reused (no prototype: nothing a program set is read from them).
const VALUE = list();
VALUE[0] = 'value';
// Objects on the path deeper than this are kept in a Set (a scan of the path below it).
const SCAN_DEPTH = 32;
// toTape's working lists, reused by every call that is not nested in another (a Proxy trap or
// a getter run by the walk may call a tool, whose arguments are then walked with lists of
// their own).
const scratch = create(null);
scratch.work = list();
scratch.path = list();
scratch.one = list();
scratch.busy = false;

// The lossless check and flattening of a value (§3.8): a tape of tags and payloads the host
// reads without recursion, or undefined when the value is not lossless JSON. The host reads
// most values itself (`walk.rs`, which runs no program code); it hands this walk what only the
// language can read (a Proxy, whose traps run here), a value over its budget (whether it is
// lossless at all decides the answer) and one larger than its cap (read here, where the engine
// checks its interrupts).
// Tags: 0 null, 1 false, 2 true, 3 number, 4 string, 5 array (length, items), 6 object (count,
// keys, values).
function toTape(root) {
  if (scratch.busy) return walk(root, list(), list(), list());
  scratch.busy = true;
  try {
    return walk(root, scratch.work, scratch.path, scratch.one);
  } finally {
    // Emptied (nothing of this value is kept past the call), for the next call.
    scratch.work.length = 0;
    scratch.path.length = 0;
    scratch.one.length = 0;
    scratch.busy = false;
  }
}

// toTape with its working lists: `path` holds the objects on the path from the root (a cycle
// returns to one), scanned while shallow, in a Set once deep.
function walk(root, work, path, one) {
  const tape = list();
  let depth = 0;
  let deep = null;
  let t = 0;
  let w = 0;
  work[w++] = root;
  try {
    while (w > 0) {
      const v = work[--w];
      if (v === EXIT) {
        const left = path[--depth];
        path[depth] = undefined;
        if (deep !== null) {
          one[0] = left;
          apply(setDelete, deep, one);
        }
        continue;
      }
      switch (typeof v) {
        case 'string':
          tape[t++] = 4;
          tape[t++] = v;
          continue;
        case 'boolean':
          tape[t++] = v ? 2 : 1;
          continue;
        case 'number':
          if (!isFinite(v) || (v === 0 && 1 / v < 0)) return undefined;
          tape[t++] = 3;
          tape[t++] = v;
          continue;
        case 'object':
          break;
        default:
          return undefined;
      }
      if (v === null) {
        tape[t++] = 0;
        continue;
      }
      if (deep !== null) {
        one[0] = v;
        if (apply(setHas, deep, one)) return undefined;
      } else {
        for (let i = 0; i < depth; i++) if (path[i] === v) return undefined;
      }
      const proto = getProto(v);
      const keys = ownKeys(v);
      const n = keys.length;
      const array = isArray(v);
      if (array) {
        if (proto !== ArrayProto) return undefined;
      } else if (proto !== ObjectProto && proto !== null) return undefined;
      path[depth++] = v;
      if (deep !== null) {
        one[0] = v;
        apply(setAdd, deep, one);
      } else if (depth > SCAN_DEPTH) {
        deep = new SetC();
        for (let i = 0; i < depth; i++) {
          one[0] = path[i];
          apply(setAdd, deep, one);
        }
      }
      work[w++] = EXIT;
      if (array) {
        const d = getDesc(v, 'length');
        if (d === undefined || typeof d.value !== 'number') return undefined;
        const len = d.value;
        if (n !== len + 1) return undefined;
        tape[t++] = 5;
        tape[t++] = len;
        for (let i = len - 1; i >= 0; i--) {
          const item = getDesc(v, i);
          if (item === undefined || !apply(hasOwn, item, VALUE) || !item.enumerable) {
            return undefined;
          }
          work[w++] = item.value;
        }
        continue;
      }
      tape[t++] = 6;
      tape[t++] = n;
      for (let i = 0; i < n; i++) {
        const k = keys[i];
        if (typeof k !== 'string') return undefined;
        tape[t++] = k;
      }
      for (let i = n - 1; i >= 0; i--) {
        const member = getDesc(v, keys[i]);
        if (member === undefined || !apply(hasOwn, member, VALUE) || !member.enumerable) {
          return undefined;
        }
        work[w++] = member.value;
      }
    }
  } catch (_) {
    return undefined;
  }
  return tape;
}

// Issue 39.4: calling a member that does not exist names it and the nearest members
// (`tools.nope is not a tool; did you mean tools.note?`) where the engine would only say
// `not a function`. The same text as `code/missing.rs`, which a test holds this to: UTF-16
// units, ASCII case, `_` and `-` ignored; a long name is cut and not compared.
const MAX_SUGGESTED = 3;
const MAX_LISTED = 10;
const MAX_NAME_UNITS = 64;
function cutName(name) {
  if (name.length <= MAX_NAME_UNITS) return name;
  let out = '';
  for (let i = 0; i < MAX_NAME_UNITS; i++) {
    const u = apply(charCodeAt, name, [i]);
    // Half a pair at the cut is a replacement character, as the host's text would have it.
    out += i === MAX_NAME_UNITS - 1 && u >= 0xd800 && u <= 0xdbff ? '\ufffd' : fromCharCode(u);
  }
  return out + '\u2026';
}
function access(global, name) {
  return apply(regexpTest, IDENT, [name]) && name.length <= MAX_NAME_UNITS
    ? global + '.' + name
    : global + '[' + apply(jsonStringify, undefined, [cutName(name)]) + ']';
}
// `null` past MAX_NAME_UNITS; else the units, ASCII lower-cased, `_` and `-` dropped.
function normalized(name) {
  if (name.length > MAX_NAME_UNITS) return null;
  const out = list();
  let n = 0;
  for (let i = 0; i < name.length; i++) {
    const u = apply(charCodeAt, name, [i]);
    if (u === 0x5f || u === 0x2d) continue;
    out[n++] = u >= 0x41 && u <= 0x5a ? u + 0x20 : u;
  }
  out.n = n;
  return out;
}
function contains(hay, needle) {
  for (let i = 0; i + needle.n <= hay.n; i++) {
    let j = 0;
    while (j < needle.n && hay[i + j] === needle[j]) j++;
    if (j === needle.n) return true;
  }
  return false;
}
function edits(a, b) {
  const row = list();
  for (let j = 0; j <= b.n; j++) row[j] = j;
  for (let i = 0; i < a.n; i++) {
    let diagonal = row[0];
    row[0] = i + 1;
    for (let j = 0; j < b.n; j++) {
      const above = row[j + 1];
      let best = above + 1;
      if (row[j] + 1 < best) best = row[j] + 1;
      const swap = diagonal + (a[i] === b[j] ? 0 : 1);
      if (swap < best) best = swap;
      row[j + 1] = best;
      diagonal = above;
    }
  }
  return row[b.n];
}
function notATool(global, name, names) {
  const shown = access(global, name);
  const wanted = normalized(name);
  // The names that pass, nearest first, ties in declaration order (an insertion sort).
  const near = list();
  let count = 0;
  if (wanted !== null) {
    for (let i = 0; i < names.length; i++) {
      const c = normalized(names[i]);
      if (c === null) continue;
      const distance = edits(wanted, c);
      const longer = wanted.n > c.n ? wanted.n : c.n;
      const shorter = wanted.n < c.n ? wanted.n : c.n;
      const third = (longer - (longer % 3)) / 3;
      const limit = third > 1 ? third : 1;
      const contained = shorter >= 3 && (contains(c, wanted) || contains(wanted, c));
      if (distance <= limit || contained) {
        let k = count++;
        while (k > 0 && near[k - 1].distance > distance) {
          near[k] = near[k - 1];
          k--;
        }
        const entry = create(null);
        entry.distance = distance;
        entry.index = i;
        near[k] = entry;
      }
    }
  }
  if (count > 0) {
    const shownCount = count < MAX_SUGGESTED ? count : MAX_SUGGESTED;
    let text = '';
    for (let k = 0; k < shownCount; k++) {
      if (k > 0) text += k === shownCount - 1 ? ' or ' : ', ';
      text += access(global, names[near[k].index]);
    }
    return shown + ' is not a tool; did you mean ' + text + '?';
  }
  if (names.length === 0) return shown + ' is not a tool; ' + global + ' has none';
  let text = '';
  const listed = names.length < MAX_LISTED ? names.length : MAX_LISTED;
  for (let k = 0; k < listed; k++) text += (k > 0 ? ', ' : '') + cutName(names[k]);
  if (names.length > MAX_LISTED) text += ' and ' + (names.length - MAX_LISTED) + ' more';
  return shown + ' is not a tool; ' + global + ' has ' + text;
}

const parts = create(null);
parts.toTape = toTape;
parts.notATool = notATool;
return parts;
