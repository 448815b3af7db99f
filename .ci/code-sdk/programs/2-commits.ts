// All commits of the repository, not the first 10 (git server; max_count defaults to 10).
const text = (r: McpResult) => r.content.map((c) => (c.type === "text" ? c.text : "")).join("");
const commits = (r: McpResult) => text(r).split("\n").filter((line) => line.startsWith("Commit: "));
const all = commits(await tools.git_git_log({ repo_path: REPO, max_count: 1000 }));
const byDefault = commits(await tools.git_git_log({ repo_path: REPO }));
return { all: all.length, byDefault: byDefault.length };
