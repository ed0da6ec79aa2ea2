/** The chat's one open dialog: which it is, and the dialog itself with what it acts on. */
import { NewChannelDialog, RenameDialog, ShortcutsDialog } from "./ChatDialogs.tsx"
import { type SessionView } from "./ChatSessionItem.tsx"
import { ConfirmDialog } from "./ui/Dialog.tsx"
import { type ChannelView } from "./useChatSelection.ts"

export type OpenDialog =
  | { readonly kind: "new-channel" }
  | { readonly kind: "rename-channel"; readonly channel: ChannelView }
  | { readonly kind: "delete-channel"; readonly channel: ChannelView }
  | { readonly kind: "rename-session"; readonly session: SessionView }
  | { readonly kind: "delete-session"; readonly session: SessionView }
  | { readonly kind: "shortcuts" }

export const ChatOpenDialog = (
  { dialog, bots, onClose, createChannel, renameChannel, deleteChannel, renameSession, deleteSession }: {
    readonly dialog: OpenDialog | undefined
    readonly bots: ReadonlyArray<{ readonly id: string; readonly name: string }>
    readonly onClose: () => void
    readonly createChannel: (name: string, botId: string) => Promise<void>
    readonly renameChannel: (target: ChannelView, name: string) => Promise<void>
    readonly deleteChannel: (target: ChannelView) => Promise<void>
    readonly renameSession: (target: SessionView, title: string) => Promise<void>
    readonly deleteSession: (target: SessionView) => Promise<void>
  }
) => (
  <>
    {dialog?.kind === "new-channel" ? <NewChannelDialog bots={bots} onCreate={createChannel} onClose={onClose} /> : null}
    {dialog?.kind === "rename-channel" ?
      (
        <RenameDialog
          title={`Rename ${dialog.channel.name}`}
          label="Name"
          field="name"
          initial={dialog.channel.name}
          onRename={(name) => renameChannel(dialog.channel, name)}
          onClose={onClose}
        />
      ) :
      null}
    {dialog?.kind === "rename-session" ?
      (
        <RenameDialog
          title="Rename conversation"
          label="Title"
          field="title"
          initial={dialog.session.title ?? ""}
          onRename={(title) => renameSession(dialog.session, title)}
          onClose={onClose}
        />
      ) :
      null}
    {dialog?.kind === "delete-channel" ?
      (
        <ConfirmDialog
          open
          title="Delete channel"
          message={`Delete the channel “${dialog.channel.name}”?`}
          confirmLabel="Delete"
          onConfirm={() => void deleteChannel(dialog.channel)}
          onClose={onClose}
        />
      ) :
      null}
    {dialog?.kind === "delete-session" ?
      (
        <ConfirmDialog
          open
          title="Delete conversation"
          message={`Delete the conversation “${dialog.session.title ?? "Untitled"}”?`}
          confirmLabel="Delete"
          onConfirm={() => void deleteSession(dialog.session)}
          onClose={onClose}
        />
      ) :
      null}
    {dialog?.kind === "shortcuts" ? <ShortcutsDialog onClose={onClose} /> : null}
  </>
)
