// The QuickJS runtime's bootstrap (Code Mode spec §3.6, §3.8). Evaluated in a fresh context
// before the program; everything the host relies on while the program runs is captured here, so a
// program that rewrites globals or prototypes cannot change what the host reads.
(function (hostCall, hostLog, onDone, onError, inspectorSource) {
  'use strict';
  const O = Object;
  const R = Reflect;
  const apply = R.apply;
  const ownKeys = R.ownKeys;
  const getProto = O.getPrototypeOf;
  const setProto = O.setPrototypeOf;
  const getDesc = O.getOwnPropertyDescriptor;
  const defineProperty = O.defineProperty;
  const create = O.create;
  const freeze = O.freeze;
  const isArray = Array.isArray;
  const hasOwn = O.prototype.hasOwnProperty;
  const ObjectProto = O.prototype;
  const ArrayProto = Array.prototype;
  const SetC = Set;
  const setAdd = Set.prototype.add;
  const setHas = Set.prototype.has;
  const setDelete = Set.prototype.delete;
  const promiseThen = Promise.prototype.then;
  const ErrorC = Error;
  const TypeErrorC = TypeError;
  const SyntaxErrorC = SyntaxError;
  const FunctionC = Function;
  const ProxyC = Proxy;
  const jsonStringify = JSON.stringify;
  const charCodeAt = String.prototype.charCodeAt;
  const fromCharCode = String.fromCharCode;
  const INSPECTOR_PARAMS =
    'apply, regexpTest, stringReplace, symbolToString, bigintToString, getDesc, getProto, StringC, setHas, setAdd, setDelete, isArray, ownKeys, hasOwn, ObjectProto, ErrorC, IDENT, list, describe';
  const StringC = String;
  const isFinite = Number.isFinite;
  const symbolToString = Symbol.prototype.toString;
  const bigintToString = BigInt.prototype.toString;
  const stringReplace = String.prototype.replace;
  const regexpTest = RegExp.prototype.test;
  const toWellFormed = String.prototype.toWellFormed;
  // Text for the host: a lone surrogate (which no Rust string holds) becomes U+FFFD.
  const wellFormed = (s) =>
    typeof toWellFormed === 'function'
      ? apply(toWellFormed, s, [])
      : apply(stringReplace, s, [/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD']);
  const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
  const AsyncFunction = getProto(async function () {}).constructor;
  const EXIT = create(null);

  // An array no prototype can reach into (a setter on Array.prototype is never called).
  function list() {
    const a = [];
    setProto(a, null);
    return a;
  }
  // Argument lists for `apply`, reused (no prototype: nothing a program set is read from them).
  const VALUE = list();
  VALUE[0] = 'value';
  const NO_ARGS = list();
  // Objects on the path deeper than this are kept in a Set (a scan of the path below it).
  const SCAN_DEPTH = 32;
  // toTape's working lists, reused by every call that is not nested in another (a Proxy trap or
  // a getter run by the walk may call a tool, whose arguments are then walked with lists of
  // their own).
  const scratch = { work: list(), path: list(), one: list(), busy: false };

  // The lossless check and flattening of a value (§3.8): a tape of tags and payloads the host
  // reads without recursion, or undefined when the value is not lossless JSON. The host reads
  // most values itself (`walk.rs`, which runs no program code); it hands this walk what only the
  // language can read (a Proxy, whose traps run here) and a value over its budget (whether it is
  // lossless at all decides the answer).
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

  // Inspection for console arguments that are not strings (§3.6.6, the simple forms).
  // What a thrown value reads as (§3.4.2).
  function describe(e) {
    try {
      if (e !== null && typeof e === 'object') {
        let isError = false;
        for (let p = getProto(e); p !== null; p = getProto(p)) {
          if (p === ErrorC.prototype) {
            isError = true;
            break;
          }
        }
        if (isError) {
          const head = StringC(e);
          // The engine keeps `stack` behind an accessor of Error.prototype (captured before the
          // program ran; the text is `programStack`'s); an own property is read as it is.
          const d = getDesc(e, 'stack');
          const getter = d === undefined ? stackGetter : d.get;
          const raw = typeof getter === 'function' ? apply(getter, e, []) : d && d.value;
          const stack = typeof raw === 'string' ? raw : '';
          return stack === '' ? head : head + '\n' + apply(stringReplace, stack, [/\s+$/, '']);
        }
      }
      const text = StringC(e);
      return typeof text === 'string' ? text : 'program threw an unrenderable value';
    } catch (_) {
      return 'program threw an unrenderable value';
    }
  }

  // The inspector (inspect.js), compiled on first use from the source the host handed over.
  let inspect;
  function inspector() {
    if (inspect === undefined) {
      const make = new FunctionC(INSPECTOR_PARAMS, inspectorSource);
      inspect = apply(make, undefined, [
        apply, regexpTest, stringReplace, symbolToString, bigintToString, getDesc, getProto,
        StringC, setHas, setAdd, setDelete, isArray, ownKeys, hasOwn, ObjectProto, ErrorC, IDENT,
        list, describe,
      ]);
    }
    return inspect;
  }

  function render(args) {
    let s = '';
    for (let i = 0; i < args.length; i++) {
      const a = args[i];
      let text;
      try {
        text = typeof a === 'string' ? a : inspector()(a, 0, new SetC());
      } catch (_) {
        text = '[uninspectable]';
      }
      s += (i ? ' ' : '') + text;
    }
    return s;
  }

  const consoleObject = create(null);
  for (const name of ['log', 'info', 'warn', 'error', 'debug']) {
    const fn = function (...args) {
      hostLog(wellFormed(render(args)));
    };
    defineProperty(fn, 'name', { value: name });
    defineProperty(consoleObject, name, { value: fn, enumerable: true });
  }
  freeze(consoleObject);

  function makeErrorClass(name, prop) {
    const C = class extends ErrorC {
      constructor(member, message) {
        super(message);
        defineProperty(this, 'name', { value: name, enumerable: true });
        defineProperty(this, prop, { value: member, enumerable: true });
      }
    };
    defineProperty(C, 'name', { value: name });
    return C;
  }

  // Members the engine calls by name on an object it is handed (issue 43.6). A namespace member
  // is an ordinary own property (§3.6.2), so a tool named `then` makes the namespace a thenable:
  // `await tools`, an async function returning it, `Promise.resolve(tools)` call
  // `tools.then(resolve, reject)`; the binding refused the function arguments (not lossless) by
  // rejecting the promise it returned, which the engine ignores, so `resolve`/`reject` were
  // never called and the program waited until the wall-clock ceiling. And `JSON.stringify`
  // calls a member named `toJSON` with its key (`""` at the top), a lossless argument: a real
  // tool call nobody wrote.
  //
  // A property read by the engine cannot be told from an explicit one (no getter or Proxy
  // helps), but the call can: the engine passes what a tool argument never is. Promise
  // resolution passes functions, and a binding argument is lossless JSON, never a function;
  // JSON.stringify passes a key string, and a tool is called with an arguments object (§4.3.1),
  // never a bare key. Such a call is not a tool call: the binding throws a TypeError naming the
  // member and how to call it, and the host is never called. Throwing (rather than returning a
  // rejected promise, as other refused arguments do) is what makes it explicit and immediate:
  // promise resolution turns a throwing `then` into a rejection at once (`await tools` rejects
  // with this TypeError; resolving instead would need a value, and the namespace itself would
  // just call `then` again), and `JSON.stringify(tools)` throws instead of yielding `"{}"`
  // silently. A TypeError, like the engine's own `tools.nope is not a function` (§3.6.2): the
  // program misused the language, no binding failed. Explicit calls with an arguments object
  // (`tools.then({...})`, `tools["toJSON"]({...})`) are ordinary tool calls.
  //
  // `toString`, `valueOf` and `toLocaleString` need nothing here: the engine calls them with no
  // argument, which is not lossless (§3.6.3), so no host call is made (and `String(tools)` then
  // throws the engine's own TypeError, the results being promises, not primitives). Other names
  // the engine reads implicitly are symbols (`Symbol.iterator`, `Symbol.toPrimitive`, ...), which
  // no member name (a string) can be; `constructor` and `__proto__` are only read from promises,
  // arrays and other engine objects, and an own `__proto__` data property is not a prototype.
  function implicitUse(member) {
    switch (member) {
      case 'then':
        // `args.length` first: an absent index would be read from the prototype chain.
        return (arg, args) =>
          typeof arg === 'function' || (args.length > 1 && typeof args[1] === 'function')
            ? "a promise's then: the namespace cannot be awaited or resolved"
            : undefined;
      case 'toJSON':
        return (arg) =>
          typeof arg === 'string'
            ? 'a JSON conversion: it does not take the string key JSON.stringify passes'
            : undefined;
      default:
        return undefined;
    }
  }

  // Issue 39.3: stacks in the program's own numbering. The engine compiles the program as the
  // body of an `AsyncFunction`, whose source has a header (`(async function anonymous(...\n) {`
  // and our `'use strict';` line) before the program's first line, and it lists the host's own
  // frames (`apply (native)`, `start (eval_script:…)`). A stack is built by
  // `Error.prepareStackTrace`: only the program's frames, as `at name (<program>:LINE:COLUMN)`,
  // the header's lines taken off (measured once, below, not assumed). A program may replace it.
  const PROGRAM_FILE = '<input>';
  const stackDesc = getDesc(ErrorC.prototype, 'stack');
  const stackGetter = stackDesc === undefined ? undefined : stackDesc.get;
  let callSite = null;
  let headerLines = 0;
  {
    // A function built as the program's is (same header), throwing on the program's line 1.
    const probe = new FunctionC("'use strict';\nthrow new Error('probe');");
    const saved = ErrorC.prepareStackTrace;
    ErrorC.prepareStackTrace = (_, frames) => {
      if (callSite === null && frames.length > 0) {
        const proto = getProto(frames[0]);
        callSite = {
          file: proto.getFileName,
          line: proto.getLineNumber,
          column: proto.getColumnNumber,
          name: proto.getFunctionName,
        };
        headerLines = apply(callSite.line, frames[0], []) - 1;
      }
      return '';
    };
    try {
      apply(probe, undefined, []);
    } catch (e) {
      // Read, in case the engine builds the stack only when it is read.
      void e.stack;
    }
    ErrorC.prepareStackTrace = saved;
  }
  function programStack(_, frames) {
    let out = '';
    if (callSite === null) return out;
    for (let i = 0; i < frames.length; i++) {
      const frame = frames[i];
      if (apply(callSite.file, frame, []) !== PROGRAM_FILE) continue;
      const line = apply(callSite.line, frame, []) - headerLines;
      if (!(line >= 1)) continue;
      const column = apply(callSite.column, frame, []);
      const name = apply(callSite.name, frame, []);
      const at = '<program>:' + line + ':' + column;
      out += '    at ' + (typeof name === 'string' && name !== '' ? name + ' (' + at + ')' : at) + '\n';
    }
    return out;
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
  // What a namespace answers for a name it does not have: nothing (`undefined`, as a plain
  // object would) for symbols, for the names the engine reads by itself (`then` when awaited,
  // `toJSON` when stringified) and for Object.prototype's names (`typeof tools.hasOwnProperty`
  // stays `undefined`, §3.6.2); any other name is a function that throws the TypeError above when
  // called. So `'nope' in tools` is false and `Object.keys(tools)` lists the tools, but
  // `tools.nope` is a function: what a call needs to say what went wrong.
  const ABSENT = new SetC(['then', 'toJSON']);
  {
    const protoKeys = ownKeys(ObjectProto);
    for (let i = 0; i < protoKeys.length; i++) {
      if (typeof protoKeys[i] === 'string') apply(setAdd, ABSENT, [protoKeys[i]]);
    }
  }
  function namespaceHandler(global, names) {
    const handler = create(null);
    // The target has no prototype: what it does not own reads as `undefined`.
    handler.get = function (target, key) {
      const member = target[key];
      if (member !== undefined || typeof key !== 'string' || apply(setHas, ABSENT, [key])) {
        return member;
      }
      return function () {
        throw new TypeErrorC(notATool(global, key, names));
      };
    };
    return handler;
  }

  // What a refused or failed call of namespace `index` rejects with, per namespace: `(member
  // index, message) => error` (the namespace's error class naming the member, or an Error).
  const failers = list();
  function failFor(index, j, message) {
    return failers[index](j, message);
  }

  function makeNamespace(index, global, names, C) {
    const ns = create(null);
    const members = list();
    for (let j = 0; j < names.length; j++) members[j] = names[j];
    failers[index] = (j, message) => (C ? new C(members[j], message) : new ErrorC(message));
    for (let j = 0; j < names.length; j++) {
      const member = names[j];
      const misuse = implicitUse(member);
      const fn = function (arg) {
        const engine = misuse === undefined ? undefined : misuse(arg, arguments);
        if (engine !== undefined) {
          throw new TypeErrorC(
            global + '.' + member + ' is a tool, not ' + engine + ' (call the tool as ' +
              global + '["' + member + '"]({...}))',
          );
        }
        // The host checks the argument (the lossless walk, this file's `toTape` for what only
        // it can read) before anything is called, and answers with the call's promise: already
        // rejected with `failFor(index, j, message)` when the argument is refused.
        return hostCall(index, j, arg);
      };
      defineProperty(fn, 'name', { value: member });
      defineProperty(ns, member, { value: fn, enumerable: true });
    }
    return new ProxyC(freeze(ns), namespaceHandler(global, names));
  }

  // Builds the namespaces, error classes and console, compiles the program as the body of a
  // strict async function (§3.6.1) and starts it. `spec`: [global, names, className, property].
  // With `javascriptFirst`, a program that does not compile (a SyntaxError: TypeScript, most
  // likely) is not reported: `start` returns false and nothing ran; the host strips its types and
  // starts it again. Otherwise it returns true.
  function start(spec, program, javascriptFirst) {
    ErrorC.prepareStackTrace = programStack;
    try {
      const params = [];
      const args = [];
      const classes = [];
      const classArgs = [];
      for (let i = 0; i < spec.length; i++) {
        const [global, names, className, prop] = spec[i];
        const C = typeof className === 'string' ? makeErrorClass(className, prop) : null;
        params.push(global);
        args.push(makeNamespace(i, global, names, C));
        if (C !== null) {
          classes.push(className);
          classArgs.push(C);
        }
      }
      params.push(...classes, 'console');
      args.push(...classArgs, consoleObject);
      let main;
      try {
        main = new AsyncFunction(...params, "'use strict';\n" + program);
      } catch (e) {
        if (javascriptFirst && e instanceof SyntaxErrorC) return false;
        throw e;
      }
      const running = apply(main, undefined, args);
      apply(promiseThen, running, [
        // The host checks the completion (the lossless walk, `toTape` for what only it reads).
        (value) => onDone(value === undefined ? 0 : 1, value),
        (e) => onError(wellFormed(describe(e))),
      ]);
    } catch (e) {
      onError(wellFormed(describe(e)));
    }
    return true;
  }

  // What the host keeps (in this order, read by `code/quickjs/walk.rs` and `host.rs`): `start`,
  // the walk, the rejection maker, and what the host's own walk compares with, captured before
  // any program ran.
  const handed = list();
  handed[0] = start;
  handed[1] = toTape;
  handed[2] = failFor;
  handed[3] = ObjectProto.__lookupGetter__;
  handed[4] = ObjectProto;
  handed[5] = ArrayProto;
  return handed;
})
