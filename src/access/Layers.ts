/**
 * The access-control services and routes as two layers, so the composition root wires them in one
 * line each. Needs the foundation services (AppConfig, SqlClient, ServerSecret, Settings, Bots).
 */
import { Layer } from "effect"
import { DiscoverHttpLive } from "../discover/Http.ts"
import * as Authenticator from "./Authenticator.ts"
import * as Cors from "./Cors.ts"
import { ApiKeys } from "./keys/ApiKeys.ts"
import { ApiKeysHttpLive } from "./keys/Http.ts"
import { RateLimiter } from "./RateLimit.ts"
import { Tokens } from "./Tokens.ts"
import { AuthHttpLive, UsersHttpLive } from "./users/Http.ts"
import { Oidc } from "./users/Oidc.ts"
import { Users } from "./users/Users.ts"
import { WidgetHttpLive } from "./widget/Http.ts"
import { Widgets } from "./widget/Widgets.ts"

const Credentials = Layer.mergeAll(ApiKeys.Default, Tokens.Default, RateLimiter.Default)

const People = Users.Default.pipe(Layer.provideMerge(Credentials))

/** Authenticator, keys, tokens, users, OpenID login, widget tokens and the rate limiter. */
export const AuthServicesLive = Layer.mergeAll(Authenticator.layer, Oidc.Default, Widgets.Default).pipe(
  Layer.provideMerge(People)
)

/** The routes of keys, discovery, sign-in, users and widget tokens, and the CORS middleware. */
export const AccessHttpLive = Layer.mergeAll(
  ApiKeysHttpLive,
  DiscoverHttpLive,
  AuthHttpLive,
  UsersHttpLive,
  WidgetHttpLive,
  Cors.layer
)
