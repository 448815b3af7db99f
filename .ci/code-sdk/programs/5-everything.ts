// Typed arguments, a caught failure and structured content (everything server).
const sum = await tools["every_get-sum"]({ a: 2, b: 40 });
const echoed = await tools.every_echo({ message: "hello" });
let failed = "";
try {
  // @ts-expect-error: a and b are numbers; the call fails its schema check.
  await tools["every_get-sum"]({ a: "two", b: 40 });
} catch (e) {
  failed = e instanceof ToolCallError ? e.toolName : "other";
}
const weather = await tools["every_get-structured-content"]({ location: "New York" });
return {
  sum: String(sum.content[0].text),
  echoed: String(echoed.content[0].text),
  failed,
  structured: weather.structuredContent !== undefined,
};
