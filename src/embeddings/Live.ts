/** The embedder EMBEDDING_MODEL names, chosen once at startup. */
import { Effect, Layer } from "effect"
import { Llm } from "../providers/Llm.ts"
import * as EmbeddingConfig from "./Config.ts"
import { Embedder } from "./Embedder.ts"
import * as Glove from "./Glove.ts"
import * as Onnx from "./Onnx.ts"
import * as Remote from "./Remote.ts"

export const layer = Layer.effect(
  Embedder,
  Effect.gen(function*() {
    const config = yield* EmbeddingConfig.EmbeddingConfig
    const provider = config.model.includes("/") ? config.model.slice(0, config.model.indexOf("/")) : undefined
    if (provider === "builtin") {
      if (config.model !== Glove.GLOVE_MODEL) {
        return yield* Effect.dieMessage(`EMBEDDING_MODEL: unknown builtin model ${config.model} (available: ${Glove.GLOVE_MODEL})`)
      }
      return Glove.make()
    }
    if (provider === "onnx") {
      const name = config.model.slice("onnx/".length)
      // The name becomes a directory under DATA_DIR/models.
      if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/.test(name)) {
        return yield* Effect.dieMessage(`EMBEDDING_MODEL: invalid ONNX model name ${JSON.stringify(name)}`)
      }
      const model = yield* Onnx.load({ dataDir: config.dataDir, name, url: config.localUrl }).pipe(
        Effect.orDieWith((error) => new Error(`EMBEDDING_MODEL ${config.model}: ${error.message}`))
      )
      return Onnx.make(name, model)
    }
    return Remote.make(yield* Llm, config.model)
  })
).pipe(Layer.provideMerge(EmbeddingConfig.layer), Layer.provide(Llm.Default))
