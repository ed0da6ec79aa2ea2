/**
 * Embedding and vector-search settings, read from the same environment as `AppConfig`.
 *
 * EMBEDDING_MODEL chooses the backend by its provider part:
 * - `builtin/glove-100d` (default): packaged word vectors, offline, nothing downloaded;
 * - `onnx/<name>`: an ONNX sentence encoder run in process, downloaded from
 *   EMBEDDING_LOCAL_URL into DATA_DIR/models/<name> at first start;
 * - anything else: a model of the provider registry ("provider/model", or a bare id for the
 *   default provider), through its OpenAI-compatible `/v1/embeddings`.
 */
import { Config, Context, Effect, Layer } from "effect"
import { AppConfig } from "../config/AppConfig.ts"

export type VectorSearchMode = "auto" | "exact"

export interface EmbeddingConfigShape {
  readonly model: string
  /** Base URL of a local model: `<url>/onnx/model.onnx` and `<url>/vocab.txt` are fetched. */
  readonly localUrl: string
  /** `exact` skips the pgvector index even where it exists (tests of the fallback, audits). */
  readonly vectorSearch: VectorSearchMode
  readonly dataDir: string
}

export class EmbeddingConfig extends Context.Tag("cairn/EmbeddingConfig")<EmbeddingConfig, EmbeddingConfigShape>() {}

export const DEFAULT_LOCAL_URL = "https://huggingface.co/Xenova/all-MiniLM-L6-v2/resolve/main"

/** The settings only this domain reads; EMBEDDING_MODEL and DATA_DIR are `AppConfig`'s (one read, one default). */
export const embeddingConfig = Config.all({
  localUrl: Config.string("EMBEDDING_LOCAL_URL").pipe(
    Config.withDefault(DEFAULT_LOCAL_URL),
    Config.validate({ message: "Expected an http(s) URL", validation: (value) => /^https?:\/\/\S+$/.test(value) }),
    Config.map((value) => value.replace(/\/+$/, ""))
  ),
  vectorSearch: Config.literal("auto", "exact")("DOCUMENTS_VECTOR_SEARCH").pipe(Config.withDefault("auto" as const))
})

export const layer = Layer.effect(
  EmbeddingConfig,
  Effect.gen(function*() {
    const app = yield* AppConfig
    const own = yield* embeddingConfig
    return { ...own, model: app.embeddingModel, dataDir: app.dataDir }
  })
)
