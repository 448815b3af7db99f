// Every .txt file under the root with its line count (filesystem server). Its tools declare an
// outputSchema, so each call resolves to the structured value, typed.
const [root] = (await tools.fs_list_allowed_directories({})).content
  .split("\n")
  .filter((line) => line.startsWith("/"));
const listing = await tools.fs_list_directory({ path: root });
const names = listing.content
  .split("\n")
  .filter((line) => line.startsWith("[FILE] ") && line.endsWith(".txt"))
  .map((line) => line.slice("[FILE] ".length));
const counts: Record<string, number> = {};
for (const name of names) {
  const file = await tools.fs_read_text_file({ path: `${root}/${name}` });
  counts[name] = file.content.split("\n").filter((l) => l !== "").length;
}
return counts;
