/**
 * `git` as a child process (@effect/platform's Command): its exit code and both outputs, never a
 * prompt (a remote that asks for credentials fails instead of waiting on a terminal).
 */
import { Command } from "@effect/platform"
import { Effect, Stream } from "effect"

export interface GitResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

const text = <E>(stream: Stream.Stream<Uint8Array, E>) => stream.pipe(Stream.decodeText(), Stream.mkString)

/** Runs `git args…` in `dir`; a git that cannot start at all answers code 127 with the reason. */
export const git = (dir: string, ...args: ReadonlyArray<string>) =>
  Effect.scoped(
    Effect.gen(function*() {
      const process = yield* Command.make("git", ...args).pipe(
        Command.workingDirectory(dir),
        Command.env({ GIT_TERMINAL_PROMPT: "0", GIT_ASKPASS: "", LC_ALL: "C" }),
        Command.start
      )
      const [stdout, stderr, code] = yield* Effect.all([text(process.stdout), text(process.stderr), process.exitCode], {
        concurrency: 3
      })
      return { code: Number(code), stdout: stdout.trim(), stderr: stderr.trim() } satisfies GitResult
    })
  ).pipe(Effect.catchAll((error) => Effect.succeed<GitResult>({ code: 127, stdout: "", stderr: String(error.message ?? error) })))

/** A remote URL or git's words with the credentials a URL may carry (`https://user:token@host`) masked. */
export const maskUrlCredentials = (text: string) => text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/@\s]+@/gi, "$1***@")
