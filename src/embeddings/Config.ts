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
import { Config, Context, Layer } from "effect"

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

const modelName = /^[^\s/]+(\/[^\s]+)?$/

export const embeddingConfig: Config.Config<EmbeddingConfigShape> = Config.all({
  model: Config.string("EMBEDDING_MODEL").pipe(
    Config.withDefault("builtin/glove-100d"),
    Config.validate({ message: 'Expected "provider/model" or a model id', validation: (value) => modelName.test(value) })
  ),
  localUrl: Config.string("EMBEDDING_LOCAL_URL").pipe(
    Config.withDefault(DEFAULT_LOCAL_URL),
    Config.validate({ message: "Expected an http(s) URL", validation: (value) => /^https?:\/\/\S+$/.test(value) }),
    Config.map((value) => value.replace(/\/+$/, ""))
  ),
  vectorSearch: Config.literal("auto", "exact")("DOCUMENTS_VECTOR_SEARCH").pipe(Config.withDefault("auto" as const)),
  dataDir: Config.string("DATA_DIR").pipe(Config.withDefault("./data"))
})

export const layer = Layer.effect(EmbeddingConfig, embeddingConfig)
