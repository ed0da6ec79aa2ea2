/**
 * Embeddings from an OpenAI-compatible `/v1/embeddings`, through the provider registry (so the
 * provider's key, retries and usage recording are the registry's). EMBEDDING_MODEL is the
 * registry's model id: "provider/model", or a bare id for the default provider.
 */
import { Effect } from "effect"
import type { Llm } from "../providers/Llm.ts"
import type { LlmError } from "../providers/Model.ts"
import { type EmbedderShape, EmbeddingError } from "./Embedder.ts"
import { normalize } from "./Vector.ts"

export const make = (llm: Llm, model: string): EmbedderShape => ({
  model,
  embed: (texts) =>
    llm.embed({ model, input: texts, usage: { source: "embedding" } }).pipe(
      Effect.mapError(
        (error: LlmError) => new EmbeddingError({ message: `${model}: ${error.kind}: ${error.detail}`, cause: error })
      ),
      Effect.flatMap((result) =>
        result.embeddings.length === texts.length
          ? Effect.succeed(result.embeddings.map(normalize))
          : Effect.fail(
            new EmbeddingError({ message: `${model}: expected ${texts.length} embeddings, got ${result.embeddings.length}` })
          )
      )
    )
})
