// All commits of the repository, not the first 10 (git server; max_count defaults to 10).
const log = await tools.git_git_log({ repo_path: REPO, max_count: 1000 });
const text = String(log.content[0].text);
const commits = text.split("\n").filter((line: string) => line.startsWith("Commit: "));
const shortDefault = await tools.git_git_log({ repo_path: REPO });
const firstPage = String(shortDefault.content[0].text)
  .split("\n")
  .filter((line: string) => line.startsWith("Commit: ")).length;
return { all: commits.length, byDefault: firstPage };
