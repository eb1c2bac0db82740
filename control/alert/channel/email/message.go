package email

import (
	"bytes"
	"embed"
	"fmt"
	htmltemplate "html/template"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/textproto"
	"strings"
	texttemplate "text/template"
	"time"

	"lookout/control/alert/channel"
)

// maxMessage bounds the event message quoted, in bytes.
const maxMessage = 16 << 10

//go:embed templates
var templateFS embed.FS

// The bodies, parsed once.
var (
	textBody = texttemplate.Must(texttemplate.ParseFS(templateFS, "templates/alert.txt"))
	htmlBody = htmltemplate.Must(htmltemplate.ParseFS(templateFS, "templates/alert.html"))
)

// view is what the templates show.
type view struct {
	channel.Alert
	Title    string
	Resolved bool
	When     string
	Message  string
}

// message renders a as an RFC 5322 message with CRLF line ends.
func (c *Channel) message(a channel.Alert) ([]byte, error) {
	v := view{Alert: a, Title: a.Summary(), Resolved: a.Resolved()}
	when := a.OccurredAt
	if when.IsZero() {
		when = c.now()
	}
	v.When = when.UTC().Format("2006-01-02 15:04:05 UTC")
	if a.Event != nil {
		v.Message = a.Event.Message
		if len(v.Message) > maxMessage {
			v.Message = strings.ToValidUTF8(v.Message[:maxMessage], "") + "…"
		}
	}

	var b bytes.Buffer
	to := make([]string, len(c.to))
	for i, addr := range c.to {
		to[i] = addr.String()
	}
	body := multipart.NewWriter(&b)
	header := func(k, v string) { fmt.Fprintf(&b, "%s: %s\r\n", k, v) }
	header("From", c.from.String())
	header("To", strings.Join(to, ",\r\n ")) // folded: 50 addresses exceed a line
	header("Subject", mime.QEncoding.Encode("utf-8", "[Lookout] "+v.Title))
	header("Date", c.now().Format(time.RFC1123Z))
	header("Message-ID", messageID(a.ID))
	header("MIME-Version", "1.0")
	header("Auto-Submitted", "auto-generated")
	header("X-Lookout-Alert-Type", a.Type)
	header("Content-Type", `multipart/alternative; boundary="`+body.Boundary()+`"`)
	b.WriteString("\r\n")

	var part bytes.Buffer
	if err := textBody.Execute(&part, v); err != nil {
		return nil, err
	}
	if err := writePart(body, "text/plain", part.Bytes()); err != nil {
		return nil, err
	}
	part.Reset()
	if err := htmlBody.Execute(&part, v); err != nil {
		return nil, err
	}
	if err := writePart(body, "text/html", part.Bytes()); err != nil {
		return nil, err
	}
	if err := body.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// writePart adds one quoted-printable UTF-8 part.
func writePart(w *multipart.Writer, contentType string, content []byte) error {
	pw, err := w.CreatePart(textproto.MIMEHeader{
		"Content-Type":              {contentType + "; charset=utf-8"},
		"Content-Transfer-Encoding": {"quoted-printable"},
	})
	if err != nil {
		return err
	}
	qp := quotedprintable.NewWriter(pw)
	if _, err := qp.Write(content); err != nil {
		return err
	}
	return qp.Close()
}

// messageID is <id@lookout>, with any character a message id cannot
// hold replaced by "-".
func messageID(id string) string {
	clean := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!#$%&'*+-/=?^_`{|}~", r) {
			return r
		}
		return '-'
	}, id)
	if clean == "" {
		clean = "unknown"
	}
	return "<" + clean + "@lookout>"
}
