/** Why a turn stops before it answers. The run engine reports either as the stream's `error` event. */
import { Data } from "effect"

/** The bot, a carapace or the task names a skill the library does not have. */
export class SkillNotFound extends Data.TaggedError("SkillNotFound")<{ readonly message: string }> {}

/** The model's stream ended without its final chunk. */
export class StreamUnfinished extends Data.TaggedError("StreamUnfinished")<{ readonly message: string }> {}
