import { HttpApiBuilder, type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Option } from "effect"
import { CairnApi } from "../../Api.ts"
import { Principal } from "../../auth/Principal.ts"
import { UserList } from "./Model.ts"
import { Oidc } from "./Oidc.ts"
import { Users } from "./Users.ts"

const addressOf = (request: HttpServerRequest.HttpServerRequest) => Option.getOrElse(request.remoteAddress, () => "unknown")

export const AuthHttpLive = HttpApiBuilder.group(CairnApi, "auth", (handlers) =>
  Effect.gen(function* () {
    const users = yield* Users
    const oidc = yield* Oidc
    return handlers
      .handle("status", () => users.status)
      .handle("setup", ({ payload, request }) => users.setup(payload, request.headers["authorization"], addressOf(request)))
      .handle("login", ({ payload, request }) => users.login(payload.username, payload.password, addressOf(request)))
      .handle("refresh", ({ payload }) => users.refresh(payload.refresh_token))
      .handle("logout", ({ payload }) => users.logout(payload.refresh_token))
      .handle("me", () => Effect.flatMap(Principal, users.me))
      .handle("oidcStart", () =>
        Effect.map(
          oidc.start,
          // A redirect, answered as is (the declared success only documents it).
          (location) => HttpServerResponse.redirect(location, { status: 302 }) as unknown as void
        )
      )
      .handle("oidcCallback", ({ urlParams }) => oidc.callback(urlParams))
  })
)

export const UsersHttpLive = HttpApiBuilder.group(CairnApi, "users", (handlers) =>
  Effect.gen(function* () {
    const users = yield* Users
    return handlers
      .handle("list", () => Effect.map(users.list, (list) => new UserList({ users: list })))
      .handle("create", ({ payload }) => Effect.flatMap(Principal, (caller) => users.create(caller, payload)))
      .handle("update", ({ path, payload }) => Effect.flatMap(Principal, (caller) => users.update(caller, path.id, payload)))
      .handle("delete", ({ path }) => Effect.flatMap(Principal, (caller) => users.remove(caller, path.id)))
  })
)
