// The QuickJS runtime's bootstrap (Code Mode spec §3.6, §3.8). Evaluated in a fresh context
// before the program; everything the host relies on while the program runs is captured here, so a
// program that rewrites globals or prototypes cannot change what the host reads.
(function (hostCall, hostLog, onDone, onError, inspectorSource, rareSource) {
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

  // An array no prototype can reach into (a setter on Array.prototype is never called).
  function list() {
    const a = [];
    setProto(a, null);
    return a;
  }
  // The walk of a value the host cannot read itself (`toTape`) and the text for a call of a
  // member a namespace does not have (`notATool`), in `rare.js`: compiled the first time either
  // is needed (most runs need neither), from the intrinsics captured here, as the inspector is.
  const RARE_PARAMS =
    'apply, getProto, ownKeys, getDesc, isArray, hasOwn, isFinite, ObjectProto, ArrayProto, SetC, setAdd, setHas, setDelete, list, create, charCodeAt, fromCharCode, regexpTest, jsonStringify, IDENT';
  let rareParts;
  function rare() {
    if (rareParts === undefined) {
      const make = new FunctionC(RARE_PARAMS, rareSource);
      rareParts = apply(make, undefined, [
        apply, getProto, ownKeys, getDesc, isArray, hasOwn, isFinite, ObjectProto, ArrayProto,
        SetC, setAdd, setHas, setDelete, list, create, charCodeAt, fromCharCode, regexpTest,
        jsonStringify, IDENT,
      ]);
    }
    return rareParts;
  }
  function toTape(root) {
    return rare().toTape(root);
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
        throw new TypeErrorC(rare().notATool(global, key, names));
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
        // The host checks the argument (its lossless walk; `toTape`, in rare.js, for what only
        // the language can read) before anything is called, and answers with the call's
        // promise: already rejected with `failFor(index, j, message)` when it is refused.
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
