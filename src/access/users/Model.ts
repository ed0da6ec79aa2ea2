/** Users, their sessions (access + refresh tokens) and the login requests. */
import { Schema } from "effect"
import { bodyOptions } from "../../contract/Params.ts"

export const Role = Schema.Literal("admin", "member")
export type Role = typeof Role.Type

const Username = Schema.Trim.pipe(
  Schema.minLength(1, { message: () => "Username must not be empty" }),
  Schema.maxLength(100)
)
const NewPassword = Schema.String.pipe(
  Schema.minLength(8, { message: () => "Password must be at least 8 characters" }),
  Schema.maxLength(1024)
)

export class UserView extends Schema.Class<UserView>("UserView")({
  id: Schema.String,
  username: Schema.String,
  email: Schema.NullOr(Schema.String),
  display_name: Schema.NullOr(Schema.String),
  role: Role,
  /** How the user signs in: a local password, an OpenID provider, or both. */
  login: Schema.Array(Schema.Literal("password", "oidc")),
  /** A disabled user cannot sign in, and the tokens and keys they hold are refused. */
  disabled: Schema.Boolean,
  last_login_at: Schema.NullOr(Schema.Date),
  created_at: Schema.Date
}) {}

export class TokenPair extends Schema.Class<TokenPair>("TokenPair")({
  access_token: Schema.String,
  token_type: Schema.Literal("bearer"),
  /** Seconds the access token is valid (one hour). */
  expires_in: Schema.Number,
  expires_at: Schema.Date,
  /**
   * Single use: each refresh answers a new one; presenting a used one ends the session. Absent when
   * the caller asked for it as the `HttpOnly` cookie instead (the web app).
   */
  refresh_token: Schema.optional(Schema.String),
  user: UserView
}) {}

export class AuthStatus extends Schema.Class<AuthStatus>("AuthStatus")({
  /** True while no user exists: `/auth/setup` creates the first admin. */
  setup_required: Schema.Boolean,
  /** What `/auth/setup` takes as its bearer: the server's API_KEY, or (without one) the setup code its log shows. */
  setup_credential: Schema.Literal("api_key", "setup_code"),
  local_login: Schema.Boolean,
  oidc_enabled: Schema.Boolean
}) {}

export class SetupRequest extends Schema.Class<SetupRequest>("SetupRequest")(
  { username: Username, password: NewPassword, email: Schema.optional(Schema.NullOr(Schema.String)) },
  bodyOptions
) {}

export class LoginRequest extends Schema.Class<LoginRequest>("LoginRequest")(
  { username: Schema.String, password: Schema.String },
  bodyOptions
) {}

/** Without `refresh_token` the refresh cookie is read (when the request asks for cookie mode). */
export class RefreshRequest extends Schema.Class<RefreshRequest>("RefreshRequest")(
  { refresh_token: Schema.optional(Schema.String) },
  bodyOptions
) {}

/**
 * Ends the session of `refresh_token`; `everywhere` ends every session of its user, who is named by
 * that token or by the request's own user access token.
 */
export class LogoutRequest extends Schema.Class<LogoutRequest>("LogoutRequest")(
  { refresh_token: Schema.optional(Schema.String), everywhere: Schema.optionalWith(Schema.Boolean, { default: () => false }) },
  bodyOptions
) {}

export class Me extends Schema.Class<Me>("Me")({
  kind: Schema.Literal("static_key", "scoped_key", "widget", "user"),
  /** Key id, bot id (widget) or user id; empty for the static key. */
  id: Schema.String,
  scopes: Schema.Array(Schema.String),
  user: Schema.NullOr(UserView)
}) {}

export class CreateUser extends Schema.Class<CreateUser>("CreateUser")(
  {
    username: Username,
    password: NewPassword,
    email: Schema.optional(Schema.NullOr(Schema.String)),
    display_name: Schema.optional(Schema.NullOr(Schema.String)),
    role: Schema.optionalWith(Role, { default: () => "member" as const })
  },
  bodyOptions
) {}

export class UpdateUser extends Schema.Class<UpdateUser>("UpdateUser")(
  { role: Schema.optional(Role), password: Schema.optional(NewPassword), disabled: Schema.optional(Schema.Boolean) },
  bodyOptions
) {}

export class UserList extends Schema.Class<UserList>("UserList")({ users: Schema.Array(UserView) }) {}

/** The signed-in user's own password: the current one, then the new one. */
export class ChangePassword extends Schema.Class<ChangePassword>("ChangePassword")(
  { current_password: Schema.String, new_password: NewPassword },
  bodyOptions
) {}

const LinkHours = Schema.Int.pipe(
  Schema.between(1, 720, { message: () => "Expiry must be between 1 and 720 hours" })
)

/** A one-time link for a new user: the role they get, a username to suggest, and how long it lasts. */
export class CreateInvitation extends Schema.Class<CreateInvitation>("CreateInvitation")(
  {
    role: Schema.optionalWith(Role, { default: () => "member" as const }),
    username_hint: Schema.optional(Schema.NullOr(Username)),
    expires_in_hours: Schema.optionalWith(LinkHours, { default: () => 72 })
  },
  bodyOptions
) {}

/** A one-time link for an existing user to choose a new password. */
export class CreateResetLink extends Schema.Class<CreateResetLink>("CreateResetLink")(
  { expires_in_hours: Schema.optionalWith(LinkHours, { default: () => 24 }) },
  bodyOptions
) {}

/** A one-time link as listed: the token itself is never shown again, only its first characters. */
export class InvitationView extends Schema.Class<InvitationView>("InvitationView")({
  id: Schema.String,
  /** `invitation` makes a new user; `password_reset` sets the password of `user_id`. */
  kind: Schema.Literal("invitation", "password_reset"),
  role: Role,
  username_hint: Schema.NullOr(Schema.String),
  user_id: Schema.NullOr(Schema.String),
  /** The user a reset link is for. */
  username: Schema.NullOr(Schema.String),
  prefix: Schema.String,
  status: Schema.Literal("pending", "used", "expired"),
  created_at: Schema.Date,
  expires_at: Schema.Date,
  used_at: Schema.NullOr(Schema.Date)
}) {}

/** A new link, answered once: `path` (`/invite/<token>`) opens the web app's form. */
export class CreatedInvitation extends Schema.Class<CreatedInvitation>("CreatedInvitation")({
  ...InvitationView.fields,
  token: Schema.String,
  path: Schema.String
}) {}

export class InvitationList extends Schema.Class<InvitationList>("InvitationList")({ invitations: Schema.Array(InvitationView) }) {}

/** What an unspent link offers, for the form that accepts it (public: the token is the credential). */
export class InvitationOffer extends Schema.Class<InvitationOffer>("InvitationOffer")({
  kind: Schema.Literal("invitation", "password_reset"),
  role: Role,
  username_hint: Schema.NullOr(Schema.String),
  /** The user whose password a reset link sets; null for an invitation. */
  username: Schema.NullOr(Schema.String),
  expires_at: Schema.Date
}) {}

/** Accepting a link: the username (an invitation's; a reset link's user is fixed) and the password. */
export class AcceptInvitation extends Schema.Class<AcceptInvitation>("AcceptInvitation")(
  { username: Schema.optional(Username), password: NewPassword },
  bodyOptions
) {}
