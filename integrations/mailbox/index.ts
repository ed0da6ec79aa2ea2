/** The mailbox integration: an IMAP poller that screens every mail before any bot sees it. */
export const id = "mailbox"
export const name = "Mailbox"
export const version = "1.0.0"
