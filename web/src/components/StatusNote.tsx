/** Loading, empty and error states, in plain words. */
export function Loading({ what }: { what: string }) {
  return (
    <p className="note loading" role="status">
      Loading {what}…
    </p>
  );
}

export function Empty({ children }: { children: React.ReactNode }) {
  return <p className="note empty">{children}</p>;
}

export function ErrorNote({ message, onRetry }: { message: string; onRetry?: () => void }) {
  return (
    <div className="note error" role="alert">
      <span>{message}</span>
      {onRetry ? (
        <button type="button" className="link" onClick={onRetry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}

export function SuccessNote({ children }: { children: React.ReactNode }) {
  return (
    <div className="note success" role="status">
      {children}
    </div>
  );
}
