/**
 * The embedder: turns texts into unit-length vectors. One backend is chosen at startup by
 * EMBEDDING_MODEL (see `Config.ts`); every vector is stored with the model's name, so a change of
 * model is noticed and the stored vectors are re-embedded.
 */
import { Context, Data, Effect } from "effect"

export class EmbeddingError extends Data.TaggedError("EmbeddingError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

export interface EmbedderShape {
  /** The name recorded with every vector (`builtin/glove-100d`, `local/all-MiniLM-L6-v2`, `openai/text-embedding-3-small`). */
  readonly model: string
  /** One unit-length vector per text, in order. */
  readonly embed: (texts: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<ReadonlyArray<number>>, EmbeddingError>
}

export class Embedder extends Context.Tag("cairn/Embedder")<Embedder, EmbedderShape>() {}
