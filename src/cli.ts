/**
 * The `cairn` command (src/commands.ts holds its tree). Help and the version are answered by
 * src/cli/Help.ts; bin/cairn.mjs answers them before anything heavy loads when dist/ is current.
 *
 * Exit codes: 0 done, 1 failed (one line on stderr says why), 2 a usage error.
 */
import { Command, ValidationError } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Cause, Console, Effect, Exit } from "effect"
import { answerHelp, stdoutRendering } from "./cli/Help.ts"
import { helpTreeOf } from "./cli/HelpTree.ts"
import { describeFailure, ExitCode } from "./cli/Output.ts"
import { cairn, examples, requestedExitCode } from "./commands.ts"
import { cairnVersion } from "./contract/Version.ts"

/** A usage error (@effect/cli has printed it) exits 2; any other failure prints one line and exits 1. */
const exitCodeOf = (exit: Exit.Exit<unknown, unknown>) => {
  const restart = requestedExitCode()
  if (restart !== undefined) return restart
  // A stop by signal (Ctrl+C of `serve`, SIGTERM) is the normal end.
  if (Exit.isSuccess(exit) || Cause.isInterruptedOnly(exit.cause)) return ExitCode.ok
  const failure = Cause.failureOption(exit.cause)
  if (failure._tag === "Some" && ValidationError.isValidationError(failure.value)) return ExitCode.usage
  return ExitCode.failure
}

const helped = answerHelp(helpTreeOf(cairn, cairnVersion, examples), process.argv.slice(2), {
  ...stdoutRendering(),
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text)
})

if (helped !== undefined) process.exitCode = helped
else {
  Command.run(cairn, { name: "cairn", version: cairnVersion })(process.argv).pipe(
    Effect.tapError((
      error
    ) => (ValidationError.isValidationError(error) ? Effect.void : Console.error(`cairn: ${describeFailure(error)}`))),
    Effect.tapDefect((cause) => Console.error(Cause.pretty(cause))),
    Effect.provide(NodeContext.layer),
    NodeRuntime.runMain({
      disableErrorReporting: true,
      // Exits at once with the code: the scope has closed, and an idle keep-alive socket or the
      // terminal's input must not hold a finished client command open.
      teardown: (exit) => process.exit(exitCodeOf(exit))
    })
  )
}
