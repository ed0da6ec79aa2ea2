/**
 * The JSON-RPC side of Cairn's MCP server: the protocol errors a request ends with, how an MCP
 * request's effect runs for the SDK, and how a handler is registered so that a malformed request
 * is JSON-RPC's `-32602` (invalid params) with the fields named, not the SDK's `-32603`.
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js"
import type { ServerNotification, ServerRequest, ServerResult } from "@modelcontextprotocol/sdk/types.js"
import { Cause, Data, Effect, Exit, Option, Runtime } from "effect"
import type * as z from "zod/v4"
import type { ServerSdk } from "../mcp/Sdk.ts"

/**
 * JSON-RPC's error codes (its specification's, which the SDK's `ErrorCode` repeats), here so the
 * service's methods name them without loading the SDK (Sdk.ts).
 */
export const rpcErrorCode = { invalidRequest: -32600, invalidParams: -32602, internalError: -32603 } as const

/** The MCP code of an unknown resource (the MCP specification's, beside JSON-RPC's own). */
export const resourceNotFound = -32002

/** The JSON-RPC error a request ends with (protocol problems, not a tool's failure). */
export class ProtocolError extends Data.TaggedError("McpProtocolError")<{ readonly code: number; readonly message: string }> {}

/** Runs one MCP request's effect for the SDK: a protocol error becomes its McpError, a defect is logged. */
export const runner =
  (runtime: Runtime.Runtime<never>, { types: { McpError } }: ServerSdk) =>
  <A>(effect: Effect.Effect<A, ProtocolError>, signal?: AbortSignal): Promise<A> =>
    Runtime.runPromiseExit(runtime)(
      Effect.tapDefect(effect, (cause) => Effect.logError("An MCP request failed", cause)),
      signal ? { signal } : undefined
    ).then((exit) => {
      if (Exit.isSuccess(exit)) return exit.value
      const failure = Cause.failureOption(exit.cause)
      if (Option.isSome(failure)) throw new McpError(failure.value.code, failure.value.message)
      throw new McpError(rpcErrorCode.internalError, Cause.isInterruptedOnly(exit.cause) ? "The request was cancelled" : "Internal error")
    })

export type Runner = ReturnType<typeof runner>

/** A zod error as `params.uri: expected string`, each problem once. */
const issuesText = (error: z.ZodError): string =>
  error.issues.map((issue) => (issue.path.length > 0 ? `${issue.path.join(".")}: ${issue.message}` : issue.message)).join("; ")

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>

/** The request schemas the SDK exports: zod objects with a `method` literal and their `params`. */
interface RequestSchema<T> extends z.ZodType<T> {
  readonly pick: (mask: { method: true }) => { readonly loose: () => z.ZodType<{ method: string }> }
}

/**
 * Registers `handler` for the method of `schema`. The SDK checks a request against the schema
 * before any handler runs and reports a mismatch as an internal error (`-32603`); here the SDK
 * only matches the method, and the request is checked against the full schema in the handler,
 * where a mismatch is `-32602` naming each field.
 */
export const onRequest = <T extends { readonly method: string }>(
  { types: { McpError } }: ServerSdk,
  server: Server,
  schema: RequestSchema<T>,
  handler: (request: T, extra: Extra) => Promise<ServerResult>
) =>
  server.setRequestHandler(
    schema.pick({ method: true }).loose() as unknown as z.ZodObject<{ method: z.ZodLiteral<string> }>,
    (raw, extra) => {
      const parsed = schema.safeParse(raw)
      if (!parsed.success) throw new McpError(rpcErrorCode.invalidParams, `Invalid ${raw.method} request: ${issuesText(parsed.error)}`)
      return handler(parsed.data, extra)
    }
  )
