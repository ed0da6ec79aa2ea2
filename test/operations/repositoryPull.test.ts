/**
 * Repository pull (spec: operations, "backups, repository pull, restart"), on a local bare
 * repository: REPO_DIR's bots, skills and workflows are read at start; a pull fast-forwards to the
 * upstream and syncs what it brought; a second pull is current; a diverged working copy is refused
 * with 409 and left as it was, an unreachable remote with 502; every pull is recorded with who
 * asked; reading and pulling need their operations scopes.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createKey } from "../auth/helpers.ts"
import { backends, tempDir } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"

const run = (cwd: string, ...args: Array<string>) =>
  execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "Ops",
      GIT_AUTHOR_EMAIL: "ops@example.test",
      GIT_COMMITTER_NAME: "Ops",
      GIT_COMMITTER_EMAIL: "ops@example.test"
    }
  }).trim()

const write = (dir: string, file: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true })
  fs.writeFileSync(path.join(dir, file), text)
}

const workflowYaml = (id: string) =>
  `id: ${id}
name: ${id}
description: A workflow from the repository
steps:
  - id: only
    prompt: Say hello
`

/** A bare origin, an author's clone that pushes to it, and REPO_DIR: a clone tracking origin's main. */
const makeRepositories = () => {
  const root = tempDir("cairn-repo-")
  const origin = path.join(root, "origin.git")
  const author = path.join(root, "author")
  const repoDir = path.join(root, "served")
  run(root, "init", "--quiet", "--bare", "--initial-branch=main", origin)
  run(root, "clone", "--quiet", origin, author)
  run(author, "checkout", "--quiet", "-B", "main")
  write(author, "bots/lighthouse.yaml", "id: lighthouse\nname: Lighthouse\nsystem_prompt: You keep the light.\n")
  write(author, "skills/tides.md", "# Reading the tides\nHigh water twice a day.\n")
  write(author, "workflows/first-watch.yaml", workflowYaml("first-watch"))
  run(author, "add", "-A")
  run(author, "commit", "--quiet", "-m", "First watch")
  run(author, "push", "--quiet", "origin", "main")
  run(root, "clone", "--quiet", "--branch", "main", origin, repoDir)
  return { root, author, repoDir }
}

describe.each(backends)("repository pull (%s)", (backend) => {
  let server: TestServer
  let repos: ReturnType<typeof makeRepositories>

  beforeAll(async () => {
    repos = makeRepositories()
    server = await startServer({ backend, env: { REPO_DIR: repos.repoDir } })
  })
  afterAll(async () => {
    await server?.close()
    if (repos) fs.rmSync(repos.root, { recursive: true, force: true })
  })

  it("reads the repository's bots, skills and workflows at start", async () => {
    const bot = await server.call((client) => client.bots.get({ path: { id: "lighthouse" } }))
    expect(bot).toMatchObject({ name: "Lighthouse", system_prompt: "You keep the light." })
    const { skills } = await server.call((client) => client.skills.list())
    expect(skills).toContainEqual({ id: "tides", title: "Reading the tides", source: "repository" })
    const workflows = await server.call((client) => client.workflows.list())
    expect(workflows.map((workflow) => workflow.id)).toContain("first-watch")
    const status = await server.call((client) => client.repository.status({ urlParams: {} }))
    expect(status).toMatchObject({ dir: repos.repoDir, branch: "main", head: run(repos.repoDir, "rev-parse", "HEAD"), pulls: [] })
    expect(status.upstream).toMatch(/^origin\/main \(.+origin\.git\)$/)
  })

  it("pulls new commits fast-forward and syncs what they brought; a second pull is current", async () => {
    const before = run(repos.repoDir, "rev-parse", "HEAD")
    write(repos.author, "bots/lighthouse.yaml", "id: lighthouse\nname: Lighthouse\nsystem_prompt: You keep the light burning.\n")
    write(repos.author, "skills/storms.md", "# Storm signals\nTwo cones up: gale from the north.\n")
    write(repos.author, "workflows/night-watch.yaml", workflowYaml("night-watch"))
    run(repos.author, "add", "-A")
    run(repos.author, "commit", "--quiet", "-m", "Night watch")
    run(repos.author, "push", "--quiet", "origin", "main")
    const after = run(repos.author, "rev-parse", "HEAD")

    const pull = await server.call((client) => client.repository.pull())
    expect(pull).toMatchObject({
      status: "updated",
      requested_by: "static_key",
      before_commit: before,
      after_commit: after,
      error: null
    })
    expect([...pull.changed_files].sort()).toEqual(["bots/lighthouse.yaml", "skills/storms.md", "workflows/night-watch.yaml"])
    expect(pull.synced.bots).toEqual(["lighthouse"])
    expect([...pull.synced.skills].sort()).toEqual(["storms", "tides"])
    expect([...pull.synced.workflows].sort()).toEqual(["first-watch", "night-watch"])
    expect(run(repos.repoDir, "rev-parse", "HEAD")).toBe(after)

    const bot = await server.call((client) => client.bots.get({ path: { id: "lighthouse" } }))
    expect(bot.system_prompt).toBe("You keep the light burning.")
    const { skills } = await server.call((client) => client.skills.list())
    expect(skills.map((skill) => skill.id)).toContain("storms")
    const workflows = await server.call((client) => client.workflows.list())
    expect(workflows.map((workflow) => workflow.id)).toContain("night-watch")

    const again = await server.call((client) => client.repository.pull())
    expect(again).toMatchObject({ status: "current", before_commit: after, after_commit: after, changed_files: [] })
  })

  it("refuses a pull that is not a fast-forward with 409, changes nothing, and records it", async () => {
    write(repos.repoDir, "bots/local.yaml", "id: local-edit\nname: Local\n")
    run(repos.repoDir, "add", "-A")
    run(repos.repoDir, "commit", "--quiet", "-m", "An edit made on the server")
    write(repos.author, "bots/upstream.yaml", "id: upstream-edit\nname: Upstream\n")
    run(repos.author, "add", "-A")
    run(repos.author, "commit", "--quiet", "-m", "An edit made upstream")
    run(repos.author, "push", "--quiet", "origin", "main")
    const head = run(repos.repoDir, "rev-parse", "HEAD")

    const response = await server.request("/api/v1/admin/operations/repository/pull", { method: "POST" })
    expect(response.status).toBe(409)
    const body = await json(response)
    expect(body.detail).toMatch(/^The pull changed nothing: .*fast-forward/i)
    expect(run(repos.repoDir, "rev-parse", "HEAD")).toBe(head)
    expect((await server.request("/api/v1/admin/bots/upstream-edit")).status).toBe(404)

    const status = await server.call((client) => client.repository.status({ urlParams: { limit: 10 } }))
    expect(status.pulls.map((pull) => pull.status)).toEqual(["failed", "current", "updated"])
    expect(status.pulls[0]).toMatchObject({ before_commit: head, after_commit: head, error: body.detail })
  })

  it("needs operations:read to read and operations:write to pull, and names the key that pulled", async () => {
    const reader = await createKey(server, ["operations:read"])
    const asReader = (method: string, url: string) => server.request(url, { method, auth: reader.key })
    expect((await asReader("GET", "/api/v1/admin/operations/repository")).status).toBe(200)
    expect((await asReader("POST", "/api/v1/admin/operations/repository/pull")).status).toBe(403)
    const writer = await createKey(server, ["operations:write"])
    // Still diverged from the test above: refused, and recorded under the writer's key.
    const response = await server.request("/api/v1/admin/operations/repository/pull", { method: "POST", auth: writer.key })
    expect(response.status).toBe(409)
    const status = await server.call((client) => client.repository.status({ urlParams: { limit: 1 } }))
    expect(status.pulls[0]!.requested_by).toBe(`scoped_key:${writer.id}`)
  })

  it("answers 502 when the remote cannot be fetched from, and changes nothing", async () => {
    const origin = path.join(repos.root, "origin.git")
    fs.renameSync(origin, `${origin}.away`)
    try {
      const head = run(repos.repoDir, "rev-parse", "HEAD")
      const response = await server.request("/api/v1/admin/operations/repository/pull", { method: "POST" })
      expect(response.status).toBe(502)
      expect((await json(response)).detail).toMatch(/^The pull changed nothing: .*origin\.git/)
      expect(run(repos.repoDir, "rev-parse", "HEAD")).toBe(head)
    } finally {
      fs.renameSync(`${origin}.away`, origin)
    }
  })
})

describe("repository pull without a repository", () => {
  let server: TestServer
  let notGit: string

  beforeAll(async () => {
    notGit = tempDir("cairn-not-git-")
    server = await startServer({ backend: "pglite", env: { REPO_DIR: notGit } })
  })
  afterAll(async () => {
    await server?.close()
    if (notGit) fs.rmSync(notGit, { recursive: true, force: true })
  })

  it("answers 409 to reading and pulling when REPO_DIR is not a git working copy", async () => {
    for (const [method, url] of [["GET", "/api/v1/admin/operations/repository"], ["POST", "/api/v1/admin/operations/repository/pull"]]) {
      const response = await server.request(url!, { method: method! })
      expect(response.status).toBe(409)
      expect((await json(response)).detail).toBe(`REPO_DIR (${notGit}) is not a git working copy`)
    }
  })
})
