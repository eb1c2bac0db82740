package panel_test

import "lookout/control/admin"

func adminReq(email string) admin.AccountRequest { return admin.AccountRequest{Email: email} }
