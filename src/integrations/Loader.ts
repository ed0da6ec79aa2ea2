/**
 * Loading one integration folder: import each file of the contract and check its shape. Nothing
 * is registered here; a broken file fails the whole integration with a message naming the file, so
 * the server can log it and start without it.
 */
import { Data } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { EffectClass, foreignTool, type Tool } from "../agent/Tool.ts"
import { isScope } from "../auth/Scopes.ts"
import { compiledFile, runningCompiled } from "../config/ProjectRoot.ts"
import { headerNamePattern } from "../contract/Params.ts"
import type { EnvVarSpec, RouteDefinition, ToolDefinition, Worker } from "../sdk/index.ts"
import type { Candidate } from "./Discovery.ts"
import { type NormalizedManifest, normalizeManifest } from "./Manifest.ts"

export type Register = (cairn: any) => void | Promise<void>

export interface ProcessManifest {
  readonly description: string
  readonly cmd: ReadonlyArray<string>
  readonly requiredEnv: ReadonlyArray<string>
}

export interface LoadedIntegration {
  readonly id: string
  readonly dir: string
  readonly name: string
  readonly version: string | null
  readonly routes: ReadonlyArray<RouteDefinition>
  readonly hooks: Register | null
  readonly dispatchers: Register | null
  readonly process: ProcessManifest | null
  /** From worker.ts; workers registered with `cairn.registerWorker` join them at load. */
  readonly workers: ReadonlyArray<Worker>
  readonly manifest: NormalizedManifest
  readonly hasConfig: boolean
  /** Its tools in the one tool contract, converted here once from the SDK's Promise form. */
  readonly tools: ReadonlyArray<Tool>
  readonly skillsDir: string | null
  readonly carapacesDir: string | null
}

export class IntegrationLoadError extends Data.TaggedError("IntegrationLoadError")<{ readonly message: string }> {}

const methods = new Set(["GET", "POST", "PUT", "PATCH", "DELETE"])

/** The module file for a contract name, `.ts` first, then `.js`/`.mjs`. */
const moduleFile = (dir: string, stem: string) =>
  [".ts", ".mts", ".js", ".mjs"].map((ext) => path.join(dir, stem + ext)).find((file) => fs.existsSync(file))

/**
 * The compiled server imports the project's integrations as the build compiled them; TypeScript
 * elsewhere (a workspace's integrations, or one edited after the build) gets tsx's loader, registered
 * on first need so a server without such files never loads it.
 */
let typeScriptLoader: Promise<void> | undefined
const runnable = async (file: string): Promise<string> => {
  if (!runningCompiled || !/\.m?ts$/.test(file)) return file
  const compiled = compiledFile(file)
  if (compiled && fs.existsSync(compiled) && fs.statSync(compiled).mtimeMs >= fs.statSync(file).mtimeMs) return compiled
  typeScriptLoader ??= import("tsx/esm/api").then(({ register }) => void register())
  await typeScriptLoader
  return file
}

const importFile = async (file: string): Promise<Record<string, unknown>> => {
  try {
    return (await import(pathToFileURL(await runnable(file)).href)) as Record<string, unknown>
  } catch (cause) {
    throw new IntegrationLoadError({
      message: `${path.basename(file)} failed to load: ${cause instanceof Error ? cause.message : String(cause)}`
    })
  }
}

const checkRoute = (route: unknown, index: number): RouteDefinition => {
  const r = route as Partial<RouteDefinition>
  const where = `router: route ${index}`
  if (typeof r !== "object" || r === null) throw new IntegrationLoadError({ message: `${where} is not an object` })
  if (typeof r.method !== "string" || !methods.has(r.method)) {
    throw new IntegrationLoadError({ message: `${where}: method must be one of ${[...methods].join(", ")}` })
  }
  if (typeof r.path !== "string" || !r.path.startsWith("/")) throw new IntegrationLoadError({ message: `${where}: path must start with /` })
  if (typeof r.handler !== "function") throw new IntegrationLoadError({ message: `${where}: handler must be a function` })
  if (r.scope !== undefined && typeof r.scope !== "string") throw new IntegrationLoadError({ message: `${where}: scope must be a string` })
  // A scope no key can hold would leave the route to admins only, silently: refused at load instead.
  if (r.scope !== undefined && !isScope(r.scope)) throw new IntegrationLoadError({ message: `${where}: unknown scope ${r.scope}` })
  if ("public" in r) {
    throw new IntegrationLoadError({ message: `${where}: public routes are gone; a webhook declares secret: {setting, header or query}` })
  }
  if (r.secret !== undefined) checkSecret(r.secret, r.scope, where)
  return { description: "", ...r } as RouteDefinition
}

const checkSecret = (secret: unknown, scope: unknown, where: string) => {
  const s = secret as Partial<Record<"setting" | "header" | "query" | "signature", unknown>>
  const fail = (message: string) => {
    throw new IntegrationLoadError({ message: `${where}: secret ${message}` })
  }
  if (typeof s !== "object" || s === null) fail("must be {setting, header or query}")
  if (scope !== undefined) fail("and scope exclude each other: a route takes a key or a shared secret")
  if (typeof s.setting !== "string" || s.setting === "") fail("needs setting: the name of one of the integration's secret settings")
  if (s.signature !== undefined) {
    const signature = s.signature as Partial<Record<"header" | "prefix", unknown>> | null
    if (s.header !== undefined || s.query !== undefined) fail("signature excludes header and query: the peer signs the body instead")
    if (typeof signature !== "object" || signature === null) fail("signature must be {header, prefix?}")
    if (typeof signature!.header !== "string" || !headerNamePattern.test(signature!.header)) fail("signature.header must be a header name")
    if (signature!.prefix !== undefined && typeof signature!.prefix !== "string") fail("signature.prefix must be a string")
    return
  }
  if (s.header === undefined && s.query === undefined) fail("needs header or query: where the peer sends it")
  if (s.header !== undefined && (typeof s.header !== "string" || !headerNamePattern.test(s.header))) fail("header must be a header name")
  if (s.query !== undefined && (typeof s.query !== "string" || s.query === "")) fail("query must be a parameter name")
}

/** A route's shared secret must be one of the integration's own settings, declared secret. */
const checkSecretSettings = (routes: ReadonlyArray<RouteDefinition>, envVars: ReadonlyArray<Pick<EnvVarSpec, "key" | "secret">>) => {
  routes.forEach((route, index) => {
    if (route.secret === undefined) return
    const setting = envVars.find((v) => v.key === route.secret!.setting)
    if (!setting?.secret) {
      throw new IntegrationLoadError({
        message: `router: route ${index}: secret.setting ${route.secret.setting} must be one of the SETUP env_vars, declared secret: true`
      })
    }
  })
}

const effectClasses: ReadonlyArray<unknown> = EffectClass.literals

/** An integration's tool checked, then converted to the tool contract under the integration's source. */
const checkTool = (tool: unknown, file: string, id: string): Tool => {
  const t = tool as Partial<ToolDefinition>
  const where = `tools/${path.basename(file)}`
  if (typeof t !== "object" || t === null) throw new IntegrationLoadError({ message: `${where}: the default export must be a tool` })
  if (typeof t.execute !== "function") throw new IntegrationLoadError({ message: `${where}: execute must be a function` })
  const schema = t.schema
  if (!schema || schema.type !== "function" || typeof schema.function?.name !== "string") {
    throw new IntegrationLoadError({ message: `${where}: schema must be {type: "function", function: {name, description, parameters}}` })
  }
  const parameters = schema.function.parameters as { type?: unknown; properties?: unknown } | undefined
  if (!parameters || parameters.type !== "object" || typeof parameters.properties !== "object") {
    throw new IntegrationLoadError({ message: `${where}: parameters must be a JSON schema object with type "object" and properties` })
  }
  if (t.effect !== undefined && !effectClasses.includes(t.effect)) {
    throw new IntegrationLoadError({ message: `${where}: effect must be one of ${effectClasses.join(", ")}` })
  }
  if (t.timeoutMs !== undefined && !(typeof t.timeoutMs === "number" && t.timeoutMs > 0)) {
    throw new IntegrationLoadError({ message: `${where}: timeoutMs must be a positive number of milliseconds` })
  }
  const execute = t.execute
  return foreignTool({
    name: schema.function.name,
    description: schema.function.description ?? "",
    parameters: { ...schema.function.parameters, type: "object", properties: schema.function.parameters.properties },
    effect: t.effect,
    source: `integration:${id}`,
    timeoutMs: t.timeoutMs,
    execute: (args, context) => execute(args, context)
  })
}

const workerName = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/

/** A worker definition as the supervisor may rely on it; `where` names its origin in the message. */
export const checkWorker = (worker: unknown, where: string): Worker => {
  const w = worker as Partial<Worker>
  const fail = (message: string) => {
    throw new IntegrationLoadError({ message: `${where}: ${message}` })
  }
  if (typeof w !== "object" || w === null) return fail("a worker must be an object (defineWorker)")
  if (typeof w.run !== "function") fail("run must be a function")
  if (w.name !== undefined && (typeof w.name !== "string" || !workerName.test(w.name))) {
    fail("name must be 1-64 letters, digits, '-' or '_'")
  }
  if (
    w.requiredSettings !== undefined &&
    (!Array.isArray(w.requiredSettings) || !w.requiredSettings.every((k) => typeof k === "string" && k.length > 0))
  ) {
    fail("requiredSettings must be a list of setting names")
  }
  if (w.singleton !== undefined && typeof w.singleton !== "boolean") fail("singleton must be true or false")
  if (w.startDelayMs !== undefined && (typeof w.startDelayMs !== "number" || !(w.startDelayMs >= 0) || w.startDelayMs > 3_600_000)) {
    fail("startDelayMs must be a number of milliseconds from 0 to 3600000")
  }
  return { ...w, name: w.name ?? "worker" } as Worker
}

/** Two workers of one integration under one name would share a status and a leadership key. */
export const checkWorkerNames = (workers: ReadonlyArray<Worker>) => {
  const seen = new Set<string>()
  for (const worker of workers) {
    if (seen.has(worker.name!)) throw new IntegrationLoadError({ message: `worker: the name ${worker.name} is used twice` })
    seen.add(worker.name!)
  }
}

const stringList = (value: unknown, what: string): ReadonlyArray<string> => {
  if (value === undefined) return []
  if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) {
    throw new IntegrationLoadError({ message: `process: ${what} must be a list of strings` })
  }
  return value
}

/** router.ts: its routes, each checked, none declared twice. */
const loadRoutes = async (dir: string): Promise<ReadonlyArray<RouteDefinition>> => {
  const routerFile = moduleFile(dir, "router")
  if (!routerFile) return []
  const mod = await importFile(routerFile)
  const exported = mod.default ?? mod.routes
  if (!Array.isArray(exported)) {
    throw new IntegrationLoadError({ message: "router: the default export must be a list of routes (defineRoutes)" })
  }
  const routes = exported.map(checkRoute)
  const seen = new Set<string>()
  for (const route of routes) {
    const key = `${route.method} ${route.path}`
    if (seen.has(key)) throw new IntegrationLoadError({ message: `router: ${key} is declared twice` })
    seen.add(key)
  }
  return routes
}

/** hooks.ts or dispatcher.ts: the function that registers them. */
const loadRegister = async (dir: string, stem: string): Promise<Register | null> => {
  const file = moduleFile(dir, stem)
  if (!file) return null
  const mod = await importFile(file)
  const register = mod.default ?? mod.register
  if (typeof register !== "function") {
    throw new IntegrationLoadError({ message: `${stem}: the default export must be a function (cairn) => void` })
  }
  return register as Register
}

/** process.ts: the command of the integration's background process. */
const loadProcess = async (dir: string): Promise<ProcessManifest | null> => {
  const processFile = moduleFile(dir, "process")
  if (!processFile) return null
  const mod = await importFile(processFile)
  const cmd = stringList(mod.CMD, "CMD")
  if (cmd.length === 0) throw new IntegrationLoadError({ message: "process: CMD must name a command" })
  return {
    description: typeof mod.DESCRIPTION === "string" ? mod.DESCRIPTION : "",
    cmd,
    requiredEnv: stringList(mod.REQUIRED_ENV, "REQUIRED_ENV")
  }
}

/** worker.ts: one worker or a list of them, each checked, no name twice. */
const loadWorkers = async (dir: string): Promise<Array<Worker>> => {
  const workerFile = moduleFile(dir, "worker")
  if (!workerFile) return []
  const mod = await importFile(workerFile)
  const exported = mod.default ?? mod.worker ?? mod.workers
  const workers = (Array.isArray(exported) ? exported : [exported]).map((worker, i) =>
    checkWorker(worker, Array.isArray(exported) ? `worker: entry ${i}` : "worker")
  )
  checkWorkerNames(workers)
  return workers
}

/** setup.ts: the settings manifest (an empty one without the file). */
const loadManifest = async (dir: string): Promise<NormalizedManifest> => {
  const setupFile = moduleFile(dir, "setup")
  if (!setupFile) return normalizeManifest(undefined)
  const mod = await importFile(setupFile)
  try {
    return normalizeManifest(mod.SETUP ?? mod.default)
  } catch (cause) {
    throw new IntegrationLoadError({ message: `setup: ${cause instanceof Error ? cause.message : String(cause)}` })
  }
}

/** tools/*: one tool per file; files starting with "_" are helpers, never tools. */
const loadTools = async (dir: string, id: string): Promise<Array<Tool>> => {
  const toolsDir = path.join(dir, "tools")
  if (!fs.existsSync(toolsDir)) return []
  const tools: Array<Tool> = []
  for (const file of fs.readdirSync(toolsDir).sort()) {
    if (file.startsWith("_") || !/\.(ts|mts|js|mjs)$/.test(file) || file.endsWith(".d.ts") || file.includes(".test.")) continue
    const mod = await importFile(path.join(toolsDir, file))
    tools.push(checkTool(mod.default ?? mod.tool, file, id))
  }
  return tools
}

export const load = async (candidate: Candidate): Promise<LoadedIntegration> => {
  const { dir, id } = candidate
  const index = moduleFile(dir, "index")
  const meta = index ? await importFile(index) : {}
  const routes = await loadRoutes(dir)
  const hooks = await loadRegister(dir, "hooks")
  const dispatchers = await loadRegister(dir, "dispatcher")
  const processManifest = await loadProcess(dir)
  const workers = await loadWorkers(dir)
  const manifest = await loadManifest(dir)
  checkSecretSettings(routes, manifest.env_vars ?? [])
  const tools = await loadTools(dir, id)
  const dirIf = (name: string) => (fs.existsSync(path.join(dir, name)) ? path.join(dir, name) : null)
  return {
    id,
    dir,
    name: typeof meta.name === "string" ? meta.name : id,
    version: typeof meta.version === "string" ? meta.version : null,
    routes,
    hooks,
    dispatchers,
    process: processManifest,
    workers,
    manifest,
    hasConfig: moduleFile(dir, "config") !== undefined,
    tools,
    skillsDir: dirIf("skills"),
    carapacesDir: dirIf("carapaces")
  }
}
