// Every .txt file under the root with its line count (filesystem server).
const [root] = String((await tools.fs_list_allowed_directories({})).content[0].text)
  .split("\n")
  .filter((line: string) => line.startsWith("/"));
const listing = await tools.fs_list_directory({ path: root });
const names: string[] = String(listing.content[0].text)
  .split("\n")
  .filter((line: string) => line.startsWith("[FILE] ") && line.endsWith(".txt"))
  .map((line: string) => line.slice("[FILE] ".length));
const counts: Record<string, number> = {};
for (const name of names) {
  const file = await tools.fs_read_text_file({ path: `${root}/${name}` });
  counts[name] = String(file.content[0].text).split("\n").filter((l: string) => l !== "").length;
}
return counts;
